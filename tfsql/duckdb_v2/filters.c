/*
 * tfsql/duckdb_v2/filters.c -- filter pushdown of tfrecord_scan: DuckDB offers the query's
 * predicates on the scan; those on the columns constant within a file (hive partition
 * columns, `split`, the filename column) that pruning.c evaluates exactly are accepted
 * (DuckDB then drops them from its plan) and rule files out before they are opened.
 *
 * Accepted: column = <> < <= > >= constant (either side), IN / NOT IN (constants),
 * IS [NOT] NULL, and AND / OR of accepted ones.
 *
 * Used to prune but left to DuckDB: BETWEEN, and an AND / OR holding one. DuckDB 2.0.1's
 * API does not say whether a BETWEEN node's bounds are inclusive: its optimizer turns
 * p > 1 AND p < 3 into a node that looks exactly like p BETWEEN 1 AND 3's (measured). So
 * the scan prunes with the inclusive range, which keeps every file either form could
 * match, and does not accept the predicate: DuckDB still applies it exactly above.
 *
 * Refused (left to DuckDB, no pruning): a column under a cast or function (e.g. a VARCHAR partition compared with a number, which
 * DuckDB casts), a constant of another type than the column's (BIGINT with BIGINT, VARCHAR
 * with VARCHAR only), NOT, prepared parameters, data columns. TFSQL_FILTER_PUSHDOWN=0 in
 * the environment refuses everything (the tests compare both).
 */
#include "v2_ext.h"

typedef duckdb_v2_table_function_filter_pushdown_info_handle pushdown_info;
typedef duckdb_v2_expression_handle expr;

static DUCKDB_V2_EXPRESSION_TYPE type_of(expr e) {
    DUCKDB_V2_EXPRESSION_TYPE t = DUCKDB_V2_EXPRESSION_TYPE_INVALID;
    duckdb_v2_expression_get_type(e, &t, NULL);
    return t;
}

static expr child(expr e, idx_t i) {
    expr c = NULL;
    duckdb_v2_expression_get_child(e, i, &c, NULL);
    return c;
}

static idx_t child_count(expr e) {
    idx_t n = 0;
    duckdb_v2_expression_get_child_count(e, &n, NULL);
    return n;
}

/* The output column a bare column reference names, or -1. */
static int column_of(pushdown_info info, expr e) {
    idx_t ref = 0, declared = 0;
    if (e == NULL || type_of(e) != DUCKDB_V2_EXPRESSION_TYPE_BOUND_COLUMN_REF ||
        duckdb_v2_expression_column_ref_get_index(e, &ref, NULL) != V2_OK ||
        duckdb_v2_table_function_filter_pushdown_get_column_index(info, ref, &declared, NULL) !=
            V2_OK) {
        return -1;
    }
    return (int)declared;
}

/* A constant of the column's own type into *out (a NULL constant too); 0, or -1 when it
 * is not one pruning.c compares exactly. */
static int constant_of(expr e, int is_int, tfval *out) {
    duckdb_v2_value_handle v = NULL;
    memset(out, 0, sizeof(*out));
    if (e == NULL || type_of(e) != DUCKDB_V2_EXPRESSION_TYPE_VALUE_CONSTANT ||
        duckdb_v2_expression_constant_get_value(e, &v, NULL) != V2_OK) {
        return -1;
    }
    int rc = v2_tfval(v, out);
    duckdb_v2_value_destroy(&v);
    int ok = rc == 0 && (out->kind == TFV_NULL || (is_int ? out->kind == TFV_INT
                                                          : out->kind == TFV_TEXT && !out->has_nul));
    if (!ok) {
        tfval_free(out);
        return -1;
    }
    return 0;
}

static int comparison_op(DUCKDB_V2_EXPRESSION_TYPE t, int flipped) {
    switch (t) {
    case DUCKDB_V2_EXPRESSION_TYPE_COMPARE_EQUAL:
        return PRED_EQ;
    case DUCKDB_V2_EXPRESSION_TYPE_COMPARE_NOTEQUAL:
        return PRED_NE;
    case DUCKDB_V2_EXPRESSION_TYPE_COMPARE_LESSTHAN:
        return flipped ? PRED_GT : PRED_LT;
    case DUCKDB_V2_EXPRESSION_TYPE_COMPARE_LESSTHANOREQUALTO:
        return flipped ? PRED_GE : PRED_LE;
    case DUCKDB_V2_EXPRESSION_TYPE_COMPARE_GREATERTHAN:
        return flipped ? PRED_LT : PRED_GT;
    case DUCKDB_V2_EXPRESSION_TYPE_COMPARE_GREATERTHANOREQUALTO:
        return flipped ? PRED_LE : PRED_GE;
    default:
        return 0;
    }
}

static int to_pred(pushdown_info info, const tfbind *b, expr e, tfpred *p, int *exact);

/* value BETWEEN lo AND hi as lo <= value AND value <= hi, and *exact = 0 (see the top). */
static int between_pred(pushdown_info info, const tfbind *b, expr e, tfpred *p, int *exact) {
    int column = child_count(e) == 3 ? column_of(info, child(e, 0)) : -1;
    int is_int = 0;
    if (column < 0 || !prunable_column(b, column, &is_int)) {
        return -1;
    }
    p->op = PRED_AND;
    p->kids = (tfpred *)calloc(2, sizeof(tfpred));
    if (p->kids == NULL) {
        return -1;
    }
    for (int i = 0; i < 2; i++) {
        tfpred *bound = &p->kids[i];
        p->nkids = (size_t)i + 1;
        bound->op = i == 0 ? PRED_GE : PRED_LE;
        bound->column = column;
        bound->consts = (tfval *)calloc(1, sizeof(tfval));
        if (bound->consts == NULL || constant_of(child(e, (idx_t)i + 1), is_int, bound->consts) != 0) {
            tfpred_free(p);
            return -1;
        }
        bound->nconsts = 1;
    }
    *exact = 0;
    return 0;
}

/* e as a tfpred over b's prunable columns; 0, or -1 (nothing kept) when it is not one.
 * *exact is cleared when the tfpred keeps more rows than e (it may then prune files, but
 * DuckDB must still apply e). */
static int to_pred(pushdown_info info, const tfbind *b, expr e, tfpred *p, int *exact) {
    memset(p, 0, sizeof(*p));
    DUCKDB_V2_EXPRESSION_TYPE t = type_of(e);
    idx_t n = child_count(e);
    int is_int = 0;
    if (t == DUCKDB_V2_EXPRESSION_TYPE_COMPARE_BETWEEN) {
        return between_pred(info, b, e, p, exact);
    }
    if (t == DUCKDB_V2_EXPRESSION_TYPE_CONJUNCTION_AND || t == DUCKDB_V2_EXPRESSION_TYPE_CONJUNCTION_OR) {
        p->op = t == DUCKDB_V2_EXPRESSION_TYPE_CONJUNCTION_AND ? PRED_AND : PRED_OR;
        p->kids = (tfpred *)calloc(n ? n : 1, sizeof(tfpred));
        if (p->kids == NULL || n == 0) {
            tfpred_free(p);
            return -1;
        }
        for (idx_t i = 0; i < n; i++) {
            p->nkids = (size_t)i + 1;
            if (to_pred(info, b, child(e, i), &p->kids[i], exact) != 0) {
                tfpred_free(p);
                return -1;
            }
        }
        return 0;
    }
    if (t == DUCKDB_V2_EXPRESSION_TYPE_OPERATOR_IS_NULL ||
        t == DUCKDB_V2_EXPRESSION_TYPE_OPERATOR_IS_NOT_NULL) {
        p->op = t == DUCKDB_V2_EXPRESSION_TYPE_OPERATOR_IS_NULL ? PRED_IS_NULL : PRED_NOT_NULL;
        p->column = n == 1 ? column_of(info, child(e, 0)) : -1;
        return p->column >= 0 && prunable_column(b, p->column, &is_int) ? 0 : -1;
    }
    int flipped = 0;
    idx_t first = 1; /* the constants' first child */
    if (comparison_op(t, 0) != 0 && n == 2) {
        p->column = column_of(info, child(e, 0));
        if (p->column < 0) {
            p->column = column_of(info, child(e, 1));
            flipped = 1;
            first = 0;
        }
        p->op = comparison_op(t, flipped);
        n = 1;
    } else if ((t == DUCKDB_V2_EXPRESSION_TYPE_COMPARE_IN ||
                t == DUCKDB_V2_EXPRESSION_TYPE_COMPARE_NOT_IN) && n >= 2) {
        p->op = t == DUCKDB_V2_EXPRESSION_TYPE_COMPARE_IN ? PRED_IN : PRED_NOT_IN;
        p->column = column_of(info, child(e, 0));
        n -= 1;
    } else {
        return -1;
    }
    if (p->column < 0 || !prunable_column(b, p->column, &is_int)) {
        return -1;
    }
    p->consts = (tfval *)calloc((size_t)n, sizeof(tfval));
    if (p->consts == NULL) {
        return -1;
    }
    for (idx_t i = 0; i < n; i++) {
        idx_t at = flipped ? 0 : first + i;
        if (constant_of(child(e, at), is_int, &p->consts[i]) != 0) {
            tfpred_free(p);
            return -1;
        }
        p->nconsts = (size_t)i + 1;
    }
    return 0;
}

static void pushdown(pushdown_info info, v2_ctx context, v2_err *err) {
    (void)context;
    const char *off = getenv("TFSQL_FILTER_PUSHDOWN");
    tfbind *b = NULL;
    idx_t n = 0;
    if ((off != NULL && strcmp(off, "0") == 0) ||
        duckdb_v2_table_function_filter_pushdown_get_bind_data(info, (void **)&b, err) != V2_OK ||
        duckdb_v2_table_function_filter_pushdown_get_filter_count(info, &n, err) != V2_OK) {
        return;
    }
    for (idx_t i = 0; i < n; i++) {
        expr e = NULL;
        tfpred p;
        int exact = 1;
        if (duckdb_v2_table_function_filter_pushdown_get_filter(info, i, &e, NULL) != V2_OK ||
            to_pred(info, b, e, &p, &exact) != 0) {
            continue;
        }
        tfpred *grown = (tfpred *)realloc(b->preds, (b->npreds + 1) * sizeof(tfpred));
        if (grown == NULL) {
            tfpred_free(&p);
            continue;
        }
        b->preds = grown;
        if (exact && duckdb_v2_table_function_filter_pushdown_accept(info, i, NULL) != V2_OK) {
            tfpred_free(&p);
            continue;
        }
        b->preds[b->npreds++] = p;
    }
}

DUCKDB_V2_ERROR v2_set_filter_pushdown(duckdb_v2_table_function_handle tf, v2_err *err) {
    return duckdb_v2_table_function_set_filter_pushdown_callback(tf, pushdown, err);
}

void v2_prune_files(const tfbind *b, tfglobal *g) {
    g->skip = prune_files(b);
    scan_count_total(b, g); /* the progress counts the files left */
}
