/*
 * tfsql/duckdb_ext/option_rules.h -- the option tables generated from the option spec
 * (options_gen.h) and the two functions that read values into a bind through them
 * (option_rules.c); included by each binding's parameter reader.
 */
#ifndef TFSQL_OPTION_RULES_H
#define TFSQL_OPTION_RULES_H

#include "ext_common.h"

#include "options_gen.h"

/* The code of `text` in `words` (matched as Python's checks do: trimmed, any case). */
int find_word(const tfsql_word *words, const char *text, int *code);
/* Store option `option`'s value: a code (choices), 0/1 (booleans), a count (-1: all)
 * or a name (owned). */
void set_option(tfbind *b, int option, long long value, char *name);

#endif /* TFSQL_OPTION_RULES_H */
