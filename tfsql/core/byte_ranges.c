/*
 * tfsql/core/byte_ranges.c -- how a stretch of a file is cut into byte ranges read in
 * parallel: `piece` bytes each from its start, the last one shorter. The Python
 * scanner's ranges and pieces (tfsql.splits.plan_ranges / plan_pieces, through
 * codec.plan_pieces) and the DuckDB extension's scan units (duckdb_ext/ranges.c) are
 * cut by these two functions.
 *
 * Example: [0, 100) in pieces of 40 is 3 ranges, [0, 40), [40, 80), [80, 100).
 */

#include "tfsql_core.h"

size_t tfsql_range_count(uint64_t start, uint64_t stop, uint64_t piece) {
    return stop > start && piece > 0 ? (size_t)((stop - start - 1) / piece + 1) : 0;
}

void tfsql_range_at(uint64_t start, uint64_t stop, uint64_t piece, size_t k, uint64_t *from,
                    uint64_t *to) {
    *from = start + (uint64_t)k * piece;
    *to = stop - *from > piece ? *from + piece : stop;
}
