/*
 * tfsql/core/render.c -- filling a message template's {name}s.
 *
 * The wording of tfsql's errors is tfsql/messages.py's, generated into C headers
 * (`python -m tfsql.message_header --write`); this fills a template as
 * tfsql.messages.render does: each {name} from the fields given, else from the
 * phrases given (a dialect's), else left as it is.
 */

#include "core_internal.h"

#include <string.h>

void tfsql_put(tfsql_text *o, const char *p, size_t n) {
    if (o->cap == 0) {
        return;
    }
    size_t room = o->cap - 1 - o->len;
    if (n > room) {
        n = room;
    }
    memcpy(o->buf + o->len, p, n);
    o->len += n;
    o->buf[o->len] = '\0';
}

static const char *field_text(const tfsql_field *fields, size_t n, const tfsql_field *phrases,
                              const char *name, size_t len) {
    for (size_t i = 0; i < n; i++) {
        if (strlen(fields[i].name) == len && memcmp(fields[i].name, name, len) == 0) {
            return fields[i].text != NULL ? fields[i].text : "None";
        }
    }
    for (const tfsql_field *p = phrases; p != NULL && p->name != NULL; p++) {
        if (strlen(p->name) == len && memcmp(p->name, name, len) == 0) {
            return p->text;
        }
    }
    return NULL;
}

void tfsql_render(tfsql_text *o, const char *template, const tfsql_field *fields, size_t n,
                  const tfsql_field *phrases) {
    const char *p = template;
    while (*p) {
        const char *open = strchr(p, '{');
        const char *close = open != NULL ? strchr(open, '}') : NULL;
        if (close == NULL) {
            tfsql_put(o, p, strlen(p));
            return;
        }
        tfsql_put(o, p, (size_t)(open - p));
        const char *text = field_text(fields, n, phrases, open + 1, (size_t)(close - open - 1));
        if (text != NULL) {
            tfsql_put(o, text, strlen(text));
        } else {
            tfsql_put(o, open, (size_t)(close - open + 1));
        }
        p = close + 1;
    }
}
