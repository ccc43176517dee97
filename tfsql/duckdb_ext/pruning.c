/*
 * tfsql/duckdb_ext/pruning.c -- predicates on the columns that are constant within a file
 * (hive partition columns, `split`, the filename column), evaluated per file so that a
 * scan skips the files they rule out before opening them. A binding that is offered a
 * query's filters (V2: filter pushdown) turns those it can evaluate exactly into tfpreds
 * and hands DuckDB back the rest; a tfpred that keeps more files than its filter needs
 * (a BETWEEN, see duckdb_v2/filters.c) prunes too, its filter handed back to DuckDB.
 *
 * Semantics are DuckDB's: a file is read when the predicate is TRUE for its values; NULL
 * (a null partition value, a NULL candidate) is not TRUE. Only AND and OR combine
 * predicates (no NOT), so NULL can be treated as FALSE throughout. BIGINT columns compare
 * as integers, VARCHAR ones byte by byte (DuckDB's default collation).
 */

#include "ext_common.h"

void tfpred_free(tfpred *p) {
    if (p == NULL) {
        return;
    }
    for (size_t i = 0; i < p->nconsts; i++) {
        tfval_free(&p->consts[i]);
    }
    free(p->consts);
    for (size_t i = 0; i < p->nkids; i++) {
        tfpred_free(&p->kids[i]);
    }
    free(p->kids);
    memset(p, 0, sizeof(*p));
}

int prunable_column(const tfbind *b, int column, int *is_int) {
    int k = column - b->ndata;
    if (column < b->ndata || k > b->npart) {
        return 0;
    }
    if (k == b->npart && b->filename_col == NULL) {
        return 0;
    }
    *is_int = k < b->npart && b->part_is_int[k];
    return 1;
}

/* The value of `column` for file f: text (len) or, for a BIGINT column, *number; 0 when
 * it is NULL. */
static int file_value(const tfbind *b, const tfile *f, int column, const char **text, size_t *len,
                      int64_t *number) {
    int k = column - b->ndata;
    if (k == b->npart) {
        *text = TFILE_SHOWN(f);
        *len = strlen(*text);
        return 1;
    }
    if (f->parts == NULL || f->parts[k] == NULL) {
        return 0;
    }
    *text = f->parts[k];
    *len = f->part_lens[k];
    if (b->part_is_int[k]) {
        *number = strtoll(*text, NULL, 10); /* the plan typed it int64 */
    }
    return 1;
}

/* -1, 0, 1 as the file's value compares with constant c; 2 when c is NULL. */
static int compare(int is_int, const char *text, size_t len, int64_t number, const tfval *c) {
    if (c->kind == TFV_NULL) {
        return 2;
    }
    if (is_int) {
        return number < c->i ? -1 : number > c->i;
    }
    size_t clen = strlen(c->text);
    int r = memcmp(text, c->text, len < clen ? len : clen);
    if (r == 0) {
        return len < clen ? -1 : len > clen;
    }
    return r < 0 ? -1 : 1;
}

int tfpred_holds(const tfbind *b, const tfpred *p, const tfile *f) {
    if (p->op == PRED_AND || p->op == PRED_OR) {
        for (size_t i = 0; i < p->nkids; i++) {
            int holds = tfpred_holds(b, &p->kids[i], f);
            if (p->op == PRED_AND && !holds) {
                return 0;
            }
            if (p->op == PRED_OR && holds) {
                return 1;
            }
        }
        return p->op == PRED_AND;
    }
    const char *text = NULL;
    size_t len = 0;
    int64_t number = 0;
    int is_int = 0;
    (void)prunable_column(b, p->column, &is_int);
    int present = file_value(b, f, p->column, &text, &len, &number);
    if (p->op == PRED_IS_NULL || p->op == PRED_NOT_NULL) {
        return p->op == PRED_IS_NULL ? !present : present;
    }
    if (!present) {
        return 0;
    }
    int c0 = p->nconsts > 0 ? compare(is_int, text, len, number, &p->consts[0]) : 2;
    switch (p->op) {
    case PRED_EQ:
        return c0 == 0;
    case PRED_NE:
        return c0 == -1 || c0 == 1;
    case PRED_LT:
        return c0 == -1;
    case PRED_LE:
        return c0 == -1 || c0 == 0;
    case PRED_GT:
        return c0 == 1;
    case PRED_GE:
        return c0 == 1 || c0 == 0;
    case PRED_IN:
    case PRED_NOT_IN: {
        int equal = 0, nulls = 0;
        for (size_t i = 0; i < p->nconsts; i++) {
            int c = compare(is_int, text, len, number, &p->consts[i]);
            equal |= c == 0;
            nulls |= c == 2;
        }
        return p->op == PRED_IN ? equal : !equal && !nulls;
    }
    default:
        return 0;
    }
}

uint8_t *prune_files(const tfbind *b) {
    if (b->npreds == 0) {
        return NULL;
    }
    uint8_t *skip = (uint8_t *)calloc(b->files.n ? b->files.n : 1, 1);
    for (size_t i = 0; skip != NULL && i < b->files.n; i++) {
        for (size_t k = 0; k < b->npreds && !skip[i]; k++) {
            skip[i] = !tfpred_holds(b, &b->preds[k], &b->files.items[i]);
        }
    }
    return skip;
}
