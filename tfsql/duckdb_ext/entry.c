/*
 * tfsql/duckdb_ext/entry.c -- the DuckDB extension's entry point: it defines
 * the C API table (DUCKDB_EXTENSION_ENTRYPOINT_CUSTOM), registers tfrecord_scan and its
 * alias read_tfrecord, and the replacement scan for FROM 'x.tfrecord' / globs.
 */

#include "duckdb_ext.h"

static int is_tfrecord_name(const char *name) {
    static const char *suffixes[] = {".tfrecord",     ".tfrecords",     ".tfrecord.gz",
                                     ".tfrecords.gz", ".tfrecord.gzip", ".tfrecord.zlib",
                                     ".tfrecord.zz",  ".tfrec",         NULL};
    for (int i = 0; suffixes[i]; i++) {
        if (ends_with_ci(name, suffixes[i])) {
            return 1;
        }
    }
    /* a glob over such files, such as 'data/part-?.tfrecord.gz' */
    if (has_glob_magic(name)) {
        for (const char *p = name; *p; p++) {
            if (strncasecmp(p, ".tfrecord", 9) == 0) {
                return 1;
            }
        }
    }
    return 0;
}

static void tf_replacement(duckdb_replacement_scan_info info, const char *table_name, void *data) {
    (void)data;
    if (!is_tfrecord_name(table_name)) {
        return;
    }
    duckdb_replacement_scan_set_function_name(info, "tfrecord_scan");
    duckdb_value v = duckdb_create_varchar(table_name);
    duckdb_replacement_scan_add_parameter(info, v);
    duckdb_destroy_value(&v);
}

static int register_scan(duckdb_connection con, const char *name) {
    duckdb_table_function f = duckdb_create_table_function();
    duckdb_table_function_set_name(f, name);
    duckdb_logical_type any = duckdb_create_logical_type(DUCKDB_TYPE_ANY);
    duckdb_logical_type boolean = duckdb_create_logical_type(DUCKDB_TYPE_BOOLEAN);
    duckdb_logical_type varchar = duckdb_create_logical_type(DUCKDB_TYPE_VARCHAR);
    duckdb_logical_type bigint = duckdb_create_logical_type(DUCKDB_TYPE_BIGINT);
    duckdb_table_function_add_parameter(f, any);
    static const char *bools[] = {"hive_partitioning", "verify_checksums", "ignore_errors",
                                  "union_by_name", "glob", NULL};
    static const char *texts[] = {"record_type", "compression", "on_corrupt", "lists", NULL};
    static const char *ints[] = {"infer_sample", "sample_size", "infer_files", "batch_size",
                                 "threads", "max_record_bytes", "batch_bytes", NULL};
    static const char *anys[] = {"filename", "schema", "columns", "hive_types", NULL};
    for (int i = 0; bools[i]; i++) {
        duckdb_table_function_add_named_parameter(f, bools[i], boolean);
    }
    for (int i = 0; texts[i]; i++) {
        duckdb_table_function_add_named_parameter(f, texts[i], varchar);
    }
    for (int i = 0; ints[i]; i++) {
        duckdb_table_function_add_named_parameter(f, ints[i], bigint);
    }
    for (int i = 0; anys[i]; i++) {
        duckdb_table_function_add_named_parameter(f, anys[i], any);
    }
    duckdb_destroy_logical_type(&any);
    duckdb_destroy_logical_type(&boolean);
    duckdb_destroy_logical_type(&varchar);
    duckdb_destroy_logical_type(&bigint);
    duckdb_table_function_set_extra_info(f, (void *)name, NULL);
    duckdb_table_function_set_bind(f, tf_bind);
    duckdb_table_function_set_init(f, tf_init);
    duckdb_table_function_set_local_init(f, tf_local_init);
    duckdb_table_function_set_function(f, tf_scan);
    duckdb_table_function_supports_projection_pushdown(f, true);
    duckdb_state st = duckdb_register_table_function(con, f);
    duckdb_destroy_table_function(&f);
    return st == DuckDBSuccess ? 0 : -1;
}

DUCKDB_EXTENSION_ENTRYPOINT_CUSTOM(duckdb_extension_info info, struct duckdb_extension_access *access) {
    crc_init();
    duckdb_database *db = access->get_database(info);
    duckdb_connection con;
    if (db == NULL || duckdb_connect(*db, &con) == DuckDBError) {
        access->set_error(info, "tfsql: cannot open a connection to register its functions");
        return false;
    }
    int rc = register_scan(con, "tfrecord_scan") | register_scan(con, "read_tfrecord");
    duckdb_disconnect(&con);
    if (rc) {
        access->set_error(info, "tfsql: cannot register tfrecord_scan / read_tfrecord");
        return false;
    }
    duckdb_add_replacement_scan(*db, tf_replacement, NULL, NULL);
    return true;
}
