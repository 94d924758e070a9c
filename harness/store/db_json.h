/* db_json.h: SQLite's JSON functions lent to later stages as a JSON reader (json_valid, json_type, json_each):
 * the members of an object or the elements of an array as plain structs, so that a report can be read without a
 * parser of our own and without SQL outside the store. It must never touch a table: these queries read only the
 * text they are given. */
#ifndef MLK_DB_JSON_H
#define MLK_DB_JSON_H

#include "status.h"
#include "store.h"

typedef enum db_json_type {
    DB_JSON_ABSENT, /* nothing at that path */
    DB_JSON_NULL,
    DB_JSON_TRUE,
    DB_JSON_FALSE,
    DB_JSON_INTEGER,
    DB_JSON_REAL,
    DB_JSON_TEXT,
    DB_JSON_ARRAY,
    DB_JSON_OBJECT
} db_json_type;

/* One member of an object or element of an array, as json_each reads it. */
typedef struct db_json_item {
    char *key;         /* a member's key; an element's index in decimal */
    db_json_type type;
    char *text;        /* the value as SQL text: a string unquoted, a number as SQLite prints it ("3000.0"), true
                        * and false "1" and "0", an array or object its JSON; NULL for null */
    char *json;        /* a scalar as JSON (json_quote: strings quoted and escaped, null "null", true and false "1"
                        * and "0" as json_each gives them); NULL for an array or object, whose text is its JSON */
    double num;        /* a number, or true (1) and false (0); NaN otherwise */
} db_json_item;

/* The type of what is at path ("$", "$.benchmarks") in json into *out, DB_JSON_ABSENT when nothing is there.
 * db only lends its connection. MLK_E_PARSE when json is not valid JSON (*out untouched), MLK_E_DB. */
int db_json_type_at(db_store *db, const char *json, const char *path, db_json_type *out, mlk_error *err);

/* The members of the object or the elements of the array at path in json, in document order (duplicate keys
 * included); a scalar there is one item with an empty key; nothing there, none. *out is malloc'd (never NULL on
 * success; free with db_json_items_free). MLK_E_PARSE (json not valid), MLK_E_NOMEM, MLK_E_DB; *out untouched. */
int db_json_items(db_store *db, const char *json, const char *path, db_json_item **out, int *n, mlk_error *err);
void db_json_items_free(db_json_item *v, int n);

/* The first item with key in v[0..n), or NULL. */
const db_json_item *db_json_find(const db_json_item *v, int n, const char *key);

#endif
