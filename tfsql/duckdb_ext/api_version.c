/*
 * tfsql/duckdb_ext/api_version.c -- the C API function table, for the engine that loads
 * the extension.
 *
 * The extension is compiled against the C API v1.5.6 headers but declares v1.2.0 in its
 * footer, so the one file loads in DuckDB 1.4 (C API v1.2.0) and 2.x. The function table
 * is append-only: its first 404 slots (v1.2.0's) are the same in every engine since
 * 1.2, and the v1.5.6 band (copy functions among others) follows them. DuckDB 1.4 gives
 * no v1.5.6 table (asking for it makes LOAD fail), so the table is filled in two steps:
 * the v1.2.0 slots from get_api("v1.2.0"), then, only when duckdb_library_version() says
 * 1.5.6 or later, every slot from get_api("v1.5.6"). The v1.5.6 slots stay NULL on older
 * engines; capi_has_copy() / capi_has_v156() say whether they are there. Besides the
 * copy functions they hold duckdb_table_function_get_client_context and
 * duckdb_client_context_get_connection_id, which reports.c needs to key a connection's
 * errors and skipped ranges: on DuckDB 1.4 tfrecord_last_error() and tfrecord_rejects()
 * refuse, saying so.
 */
#include "duckdb_ext.h"

#include <stdio.h>
#include <string.h>

duckdb_ext_api_v1 duckdb_ext_api = {0};

static int has_v156;
static const char *engine_version = "";

/* Bytes of the table up to the first slot past v1.2.0 (duckdb_create_instance_cache
 * opens the v1.5.6 band in duckdb_extension.h; the macro names the slot). */
static size_t v120_bytes(void) {
    return (size_t)((const char *)&duckdb_create_instance_cache - (const char *)&duckdb_ext_api);
}

/* "v1.4.5" -> 1.4.5 >= 1.5.6? Unparsable versions (a development build) count as new. */
static int at_least_1_5_6(const char *version) {
    int major = 0, minor = 0, patch = 0;
    if (version == NULL || sscanf(version[0] == 'v' ? version + 1 : version, "%d.%d.%d", &major,
                                  &minor, &patch) != 3) {
        return 1;
    }
    if (major != 1) {
        return major > 1;
    }
    return minor > 5 || (minor == 5 && patch >= 6);
}

int capi_load(duckdb_extension_info info, struct duckdb_extension_access *access, char *err) {
    const void *base = access->get_api(info, "v1.2.0");
    if (base == NULL) {
        snprintf(err, ERRLEN, "tfsql: this DuckDB gives extensions no C API v1.2.0 table");
        return -1;
    }
    memcpy(&duckdb_ext_api, base, v120_bytes());
    engine_version = duckdb_library_version();
    has_v156 = 0;
    if (at_least_1_5_6(engine_version)) {
        const void *full = access->get_api(info, "v1.5.6");
        if (full != NULL) {
            memcpy(&duckdb_ext_api, full, sizeof(duckdb_ext_api));
            has_v156 = 1;
        }
    }
    return 0;
}

int capi_has_copy(void) { return has_v156; }

int capi_has_v156(void) { return has_v156; }

const char *capi_engine_version(void) { return engine_version; }
