/* scenario_yaml.c: libyaml events to a small node tree, with 1-based locations, and typed scalar readers.
 * It must never accept what the scenario format refuses (anchors, aliases, tags, several documents) nor
 * recurse deeper than MLK_YAML_MAX_DEPTH, whatever the input. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "scenario_internal.h"
#include "text.h"

/* A mapping or list this long is not a scenario; the cap keeps the duplicate scans (keys, axis values)
 * quadratic in something small. */
#define MAX_ENTRIES 4096

/* ------------------------------------------------------------------------------------------------
 * Allocation (with the tests' failure injection)
 * ---------------------------------------------------------------------------------------------- */

static int64_t fail_after = -1;

void mlk_scenario_fail_alloc_after(int64_t n)
{
    fail_after = n;
}

void *mlk_yalloc(size_t n)
{
    if (fail_after == 0)
        return NULL;
    if (fail_after > 0)
        fail_after--;
    return malloc(n ? n : 1);
}

void *mlk_ycalloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    size_t bytes = n * size;
    void *p = mlk_yalloc(bytes);
    if (p)
        memset(p, 0, bytes ? bytes : 1);
    return p;
}

char *mlk_ystrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = mlk_yalloc(n);
    if (p)
        memcpy(p, s, n);
    return p;
}

/* ------------------------------------------------------------------------------------------------
 * Errors
 * ---------------------------------------------------------------------------------------------- */

int mlk_yfail(mlk_error *err, const char *name, mlk_loc loc, const char *fmt, ...)
{
    char msg[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return mlk_fail(err, MLK_E_PARSE, "%s:%d:%d: %s", name, loc.line, loc.col, msg);
}

static mlk_loc loc_of(yaml_mark_t m)
{
    mlk_loc l = {m.line >= INT32_MAX ? INT32_MAX : (int)m.line + 1,
                 m.column >= INT32_MAX ? INT32_MAX : (int)m.column + 1};
    return l;
}

/* libyaml gives reader errors as a byte offset only; count lines and characters the way its marks do. */
static mlk_loc loc_of_offset(const char *text, size_t len, size_t offset)
{
    mlk_loc l = {1, 1};
    for (size_t i = 0; i < offset && i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == '\n' || (c == '\r' && (i + 1 >= len || text[i + 1] != '\n'))) {
            l.line++;
            l.col = 1;
        } else if ((c & 0xC0) != 0x80 && c != '\r') {
            l.col++;
        }
    }
    return l;
}

/* ------------------------------------------------------------------------------------------------
 * Nodes
 * ---------------------------------------------------------------------------------------------- */

void mlk_ynode_free(mlk_ynode *n)
{
    if (!n)
        return;
    for (int i = 0; i < n->n_items; i++)
        mlk_ynode_free(n->items[i]);
    free(n->items);
    free(n->text);
    free(n);
}

static int append(mlk_ynode *parent, mlk_ynode *child)
{
    if (parent->n_items == parent->cap_items) {
        int cap = parent->cap_items ? parent->cap_items * 2 : 4;
        mlk_ynode **items = mlk_yalloc((size_t)cap * sizeof *items);
        if (!items)
            return MLK_E_NOMEM;
        if (parent->n_items)
            memcpy(items, parent->items, (size_t)parent->n_items * sizeof *items);
        free(parent->items);
        parent->items = items;
        parent->cap_items = cap;
    }
    parent->items[parent->n_items++] = child;
    return MLK_OK;
}

const mlk_ynode *mlk_ymap_get(const mlk_ynode *map, const char *key)
{
    if (!map || map->kind != MLK_YMAP)
        return NULL;
    for (int i = 0; i + 1 < map->n_items; i += 2)
        if (!strcmp(map->items[i]->text, key))
            return map->items[i + 1];
    return NULL;
}

/* ------------------------------------------------------------------------------------------------
 * Building the tree from events
 * ---------------------------------------------------------------------------------------------- */

typedef struct ybuild {
    yaml_parser_t parser;
    const char *text, *name;
    size_t len;
    mlk_error *err;
} ybuild;

static int syntax_error(ybuild *b)
{
    yaml_parser_t *p = &b->parser;
    const char *problem = p->problem ? p->problem : "unknown problem";
    if (p->error == YAML_MEMORY_ERROR)
        return mlk_fail(b->err, MLK_E_NOMEM, "%s: out of memory while parsing YAML", b->name);
    if (p->error == YAML_READER_ERROR)
        return mlk_yfail(b->err, b->name, loc_of_offset(b->text, b->len, p->problem_offset),
                         "invalid input: %s (expected UTF-8 text without control characters)", problem);
    if (p->context) {
        mlk_loc c = loc_of(p->context_mark);
        return mlk_yfail(b->err, b->name, loc_of(p->problem_mark), "YAML syntax error: %s (%s at %d:%d)", problem,
                         p->context, c.line, c.col);
    }
    return mlk_yfail(b->err, b->name, loc_of(p->problem_mark), "YAML syntax error: %s", problem);
}

static int next_event(ybuild *b, yaml_event_t *ev)
{
    if (!yaml_parser_parse(&b->parser, ev))
        return syntax_error(b);
    return MLK_OK;
}

/* Anchors and tags are refused where they are written, aliases where they are used. */
static int check_plain_node(ybuild *b, const yaml_event_t *ev)
{
    const yaml_char_t *anchor = NULL, *tag = NULL;
    if (ev->type == YAML_SCALAR_EVENT) {
        anchor = ev->data.scalar.anchor;
        tag = ev->data.scalar.tag;
    } else if (ev->type == YAML_SEQUENCE_START_EVENT) {
        anchor = ev->data.sequence_start.anchor;
        tag = ev->data.sequence_start.tag;
    } else if (ev->type == YAML_MAPPING_START_EVENT) {
        anchor = ev->data.mapping_start.anchor;
        tag = ev->data.mapping_start.tag;
    } else if (ev->type == YAML_ALIAS_EVENT) {
        return mlk_yfail(b->err, b->name, loc_of(ev->start_mark),
                         "aliases are not supported (write the value out; expected a scalar, list or mapping)");
    } else {
        return mlk_yfail(b->err, b->name, loc_of(ev->start_mark), "expected a scalar, list or mapping");
    }
    if (anchor)
        return mlk_yfail(b->err, b->name, loc_of(ev->start_mark),
                         "anchor '&%.64s': anchors and aliases are not supported", (const char *)anchor);
    if (tag)
        return mlk_yfail(b->err, b->name, loc_of(ev->start_mark), "tag '%.64s': tags are not supported",
                         (const char *)tag);
    return MLK_OK;
}

static int make_scalar(ybuild *b, const yaml_event_t *ev, mlk_ynode **out)
{
    const char *v = (const char *)ev->data.scalar.value;
    size_t n = ev->data.scalar.length;
    if (memchr(v, '\0', n))
        return mlk_yfail(b->err, b->name, loc_of(ev->start_mark), "NUL characters are not allowed in a scalar");
    /* The reader refuses control characters in the file; an escape ("\e", "\x9b") would still make one, and every
     * value may end up in a cell's name on a terminal. Line breaks and tabs stay (block scalars). */
    if (!mlk_text_is_safe(v, MLK_TEXT_KEEP_NL | MLK_TEXT_KEEP_TAB))
        return mlk_yfail(b->err, b->name, loc_of(ev->start_mark),
                         "a control character in a scalar (written as an escape such as \\e or \\a): not allowed");
    mlk_ynode *node = mlk_ycalloc(1, sizeof *node);
    char *text = mlk_yalloc(n + 1);
    if (!node || !text) {
        free(node);
        free(text);
        return mlk_fail(b->err, MLK_E_NOMEM, "%s: out of memory", b->name);
    }
    memcpy(text, v, n);
    text[n] = '\0';
    node->kind = MLK_YSCALAR;
    node->loc = loc_of(ev->start_mark);
    node->text = text;
    node->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    *out = node;
    return MLK_OK;
}

static int build_node(ybuild *b, yaml_event_t *ev, int depth, mlk_ynode **out);

/* Children up to the closing event; node owns what was appended, even on failure. */
static int build_children(ybuild *b, mlk_ynode *node, int depth)
{
    yaml_event_type_t end = node->kind == MLK_YMAP ? YAML_MAPPING_END_EVENT : YAML_SEQUENCE_END_EVENT;
    for (;;) {
        yaml_event_t ev;
        int rc = next_event(b, &ev);
        if (rc)
            return rc;
        if (ev.type == end) {
            yaml_event_delete(&ev);
            return MLK_OK;
        }
        mlk_loc at = loc_of(ev.start_mark);
        bool is_key = node->kind == MLK_YMAP && node->n_items % 2 == 0;
        if (is_key && ev.type != YAML_SCALAR_EVENT && ev.type != YAML_ALIAS_EVENT) {
            yaml_event_delete(&ev);
            return mlk_yfail(b->err, b->name, at, "expected a plain key, got a %s",
                             ev.type == YAML_MAPPING_START_EVENT ? "mapping" : "list");
        }
        if ((node->kind == MLK_YMAP ? node->n_items / 2 : node->n_items) >= MAX_ENTRIES) {
            yaml_event_delete(&ev);
            return mlk_yfail(b->err, b->name, at, "expected at most %d entries in a %s", MAX_ENTRIES,
                             node->kind == MLK_YMAP ? "mapping" : "list");
        }
        mlk_ynode *child = NULL;
        if ((rc = build_node(b, &ev, depth + 1, &child)))
            return rc;
        if (is_key) {
            const mlk_ynode *prev = NULL;
            for (int i = 0; i < node->n_items && !prev; i += 2)
                if (!strcmp(node->items[i]->text, child->text))
                    prev = node->items[i];
            if (prev) {
                mlk_yfail(b->err, b->name, child->loc, "duplicate key '%.64s' (first at %d:%d; expected each key once)",
                          child->text, prev->loc.line, prev->loc.col);
                mlk_ynode_free(child);
                return MLK_E_PARSE;
            }
        }
        if (append(node, child)) {
            mlk_ynode_free(child);
            return mlk_fail(b->err, MLK_E_NOMEM, "%s: out of memory", b->name);
        }
    }
}

/* Takes ownership of *ev (always deleted). */
static int build_node(ybuild *b, yaml_event_t *ev, int depth, mlk_ynode **out)
{
    int rc = check_plain_node(b, ev);
    if (!rc && depth > MLK_YAML_MAX_DEPTH)
        rc = mlk_yfail(b->err, b->name, loc_of(ev->start_mark), "expected at most %d levels of nesting",
                       MLK_YAML_MAX_DEPTH);
    if (rc) {
        yaml_event_delete(ev);
        return rc;
    }
    if (ev->type == YAML_SCALAR_EVENT) {
        rc = make_scalar(b, ev, out);
        yaml_event_delete(ev);
        return rc;
    }
    mlk_ynode *node = mlk_ycalloc(1, sizeof *node);
    if (!node) {
        yaml_event_delete(ev);
        return mlk_fail(b->err, MLK_E_NOMEM, "%s: out of memory", b->name);
    }
    node->kind = ev->type == YAML_MAPPING_START_EVENT ? MLK_YMAP : MLK_YSEQ;
    node->loc = loc_of(ev->start_mark);
    yaml_event_delete(ev);
    if ((rc = build_children(b, node, depth))) {
        mlk_ynode_free(node);
        return rc;
    }
    *out = node;
    return MLK_OK;
}

/* Expect an event of type want; anything else is reported with what. */
static int expect_event(ybuild *b, yaml_event_type_t want, yaml_event_t *ev, mlk_loc *at)
{
    int rc = next_event(b, ev);
    if (rc)
        return rc;
    *at = loc_of(ev->start_mark);
    if (ev->type == want)
        return MLK_OK;
    yaml_event_type_t got = ev->type;
    yaml_event_delete(ev);
    if (want == YAML_DOCUMENT_START_EVENT && got == YAML_STREAM_END_EVENT)
        return mlk_yfail(b->err, b->name, (mlk_loc){1, 1}, "expected a mapping of scenario keys, got an empty file");
    if (got == YAML_DOCUMENT_START_EVENT)
        return mlk_yfail(b->err, b->name, *at, "multiple documents are not supported (expected one)");
    return mlk_yfail(b->err, b->name, *at, "expected one YAML document");
}

static int build_document(ybuild *b, mlk_ynode **out, mlk_loc *doc_loc)
{
    yaml_event_t ev;
    mlk_loc at;
    int rc = expect_event(b, YAML_STREAM_START_EVENT, &ev, &at);
    if (rc)
        return rc;
    yaml_event_delete(&ev);
    if ((rc = expect_event(b, YAML_DOCUMENT_START_EVENT, &ev, doc_loc)))
        return rc;
    yaml_event_delete(&ev);
    if ((rc = next_event(b, &ev)))
        return rc;
    mlk_ynode *root = NULL;
    if ((rc = build_node(b, &ev, 1, &root)))
        return rc;
    if (!(rc = expect_event(b, YAML_DOCUMENT_END_EVENT, &ev, &at))) {
        yaml_event_delete(&ev);
        if (!(rc = expect_event(b, YAML_STREAM_END_EVENT, &ev, &at)))
            yaml_event_delete(&ev);
    }
    if (rc) {
        mlk_ynode_free(root);
        return rc;
    }
    *out = root;
    return MLK_OK;
}

int mlk_yaml_parse(const char *text, size_t len, const char *name, mlk_ynode **out, mlk_loc *doc_loc, mlk_error *err)
{
    ybuild b = {.text = text, .name = name, .len = len, .err = err};
    if (!yaml_parser_initialize(&b.parser))
        return mlk_fail(err, MLK_E_NOMEM, "%s: out of memory", name);
    yaml_parser_set_input_string(&b.parser, (const unsigned char *)text, len);
    mlk_ynode *root = NULL;
    mlk_loc dl = {1, 1};
    int rc = build_document(&b, &root, &dl);
    yaml_parser_delete(&b.parser);
    if (rc)
        return rc;
    *out = root;
    *doc_loc = dl;
    return MLK_OK;
}

/* ------------------------------------------------------------------------------------------------
 * Typed readers
 * ---------------------------------------------------------------------------------------------- */

bool mlk_ynull(const mlk_ynode *n)
{
    return n && n->kind == MLK_YSCALAR && n->plain &&
           (!n->text[0] || !strcmp(n->text, "~") || !strcasecmp(n->text, "null"));
}

const char *mlk_ydescribe(const mlk_ynode *n, char *buf, size_t cap)
{
    if (!n)
        return "nothing";
    if (n->kind == MLK_YSEQ)
        return "a list";
    if (n->kind == MLK_YMAP)
        return "a mapping";
    if (mlk_ynull(n))
        return n->text[0] ? "null" : "nothing";
    size_t len = strlen(n->text), room = cap > 8 ? cap - 8 : 0;
    if (len <= room)
        snprintf(buf, cap, "'%s'", n->text);
    else
        snprintf(buf, cap, "'%.*s...'", (int)room, n->text);
    return buf;
}

int mlk_ybool_word(const char *s)
{
    static const char *const yes[] = {"on", "true", "yes"}, *const no[] = {"off", "false", "no"};
    for (int i = 0; i < 3; i++) {
        if (!strcasecmp(s, yes[i]))
            return 1;
        if (!strcasecmp(s, no[i]))
            return 0;
    }
    return -1;
}

int mlk_yget_string(const mlk_ynode *n, const char *what, const char *name, char **out, mlk_error *err)
{
    char d[64];
    if (!n || n->kind != MLK_YSCALAR || mlk_ynull(n))
        return mlk_yfail(err, name, n ? n->loc : (mlk_loc){1, 1}, "%s: expected a string, got %s", what,
                         mlk_ydescribe(n, d, sizeof d));
    char *s = mlk_ystrdup(n->text);
    if (!s)
        return mlk_fail(err, MLK_E_NOMEM, "%s: out of memory", name);
    *out = s;
    return MLK_OK;
}

static bool all_of(const char *s, const char *set)
{
    return s[0] && strspn(s, set) == strlen(s);
}

/* What a typed field got: a quoted scalar is named as such, since its text alone would look right. */
static const char *describe_typed(const mlk_ynode *n, char *buf, size_t cap)
{
    if (!n || n->kind != MLK_YSCALAR || n->plain)
        return mlk_ydescribe(n, buf, cap);
    char text[64];
    snprintf(buf, cap, "the quoted string %s (write it unquoted)", mlk_ydescribe(n, text, sizeof text));
    return buf;
}

static mlk_loc loc_or_start(const mlk_ynode *n)
{
    return n ? n->loc : (mlk_loc){1, 1};
}

/* Decimal digits with an optional sign; no leading zeros, which YAML 1.1 reads as octal. */
static bool decimal_integer(const char *s)
{
    const char *t = s + (s[0] == '+' || s[0] == '-');
    return all_of(t, "0123456789") && (t[0] != '0' || !t[1]);
}

int mlk_yget_int(const mlk_ynode *n, const char *what, int64_t lo, int64_t hi, const char *name, int64_t *out,
                 mlk_error *err)
{
    char d[128], want[96];
    /* A bound that large is a sanity cap, not worth stating unless it is exceeded. */
    if (hi >= 1000000000)
        snprintf(want, sizeof want, "an integer >= %lld", (long long)lo);
    else
        snprintf(want, sizeof want, "an integer in [%lld, %lld]", (long long)lo, (long long)hi);
    errno = 0;
    char *end = NULL;
    long long x = n && n->kind == MLK_YSCALAR && n->plain && decimal_integer(n->text) ? strtoll(n->text, &end, 10) : 0;
    if (!end || *end || errno || x < lo || x > hi) {
        if (end && !*end && (errno || x > hi))
            snprintf(want, sizeof want, "an integer in [%lld, %lld]", (long long)lo, (long long)hi);
        return mlk_yfail(err, name, loc_or_start(n), "%s: expected %s, got %s", what, want,
                         describe_typed(n, d, sizeof d));
    }
    *out = x;
    return MLK_OK;
}

int mlk_yget_number(const mlk_ynode *n, const char *what, double lo_exclusive, double hi, const char *name, double *out,
                    mlk_error *err)
{
    char d[128];
    /* Only decimal forms: strtod would also take "inf", "nan" and hex. */
    errno = 0;
    char *end = NULL;
    double x =
        n && n->kind == MLK_YSCALAR && n->plain && all_of(n->text, "0123456789+-.eE") && strpbrk(n->text, "0123456789")
            ? strtod(n->text, &end)
            : 0;
    if (!end || *end || errno || !isfinite(x) || !(x > lo_exclusive))
        return mlk_yfail(err, name, loc_or_start(n), "%s: expected a number > %g, got %s", what, lo_exclusive,
                         describe_typed(n, d, sizeof d));
    if (x > hi)
        return mlk_yfail(err, name, n->loc, "%s: expected a number in (%g, %g], got %s", what, lo_exclusive, hi,
                         describe_typed(n, d, sizeof d));
    *out = x;
    return MLK_OK;
}

int mlk_yget_bool(const mlk_ynode *n, const char *what, const char *name, bool *out, mlk_error *err)
{
    char d[128];
    int v = n && n->kind == MLK_YSCALAR && n->plain ? mlk_ybool_word(n->text) : -1;
    if (v < 0)
        return mlk_yfail(err, name, loc_or_start(n), "%s: expected a boolean (on/off, true/false, yes/no), got %s",
                         what, describe_typed(n, d, sizeof d));
    *out = v == 1;
    return MLK_OK;
}
