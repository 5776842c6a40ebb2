/*
 * h1p (HTTP/1 parser): llhttp's response parsing with the per-field work done in C.
 *
 * llhttp reports a response head as many small callbacks (each piece of each field name and
 * value). Crossing into Swift for each costs more than the parsing itself, so these callbacks
 * stay here and Swift is called once per head (`on_headers_complete`) and once per body piece.
 *
 * Two modes. A head that lies within one read (the usual case) is recorded as it is parsed, as
 * field offsets into that read's buffer, in memory the caller lends for the read: nothing is
 * copied until Swift copies the head once. A head that continues into the next read, or has more
 * fields than the lent memory holds, switches to spans that this parser owns, with the bytes
 * stashed before the read buffer is reused; `h1p_lay_out` then joins the pieces.
 *
 * Loop thread only: one parser per connection, parsed one read at a time.
 */
#ifndef H1P_PARSER_H
#define H1P_PARSER_H

#include <stddef.h>
#include <stdint.h>
#include <llhttp.h>

/* Span kinds (the slow mode). */
#define H1P_SPAN_FIELD_START 1   /* first piece of a field name: a new field */
#define H1P_SPAN_FIELD_MORE  2   /* a later piece of the same name */
#define H1P_SPAN_VALUE       3   /* a piece of the current field's value */
#define H1P_SPAN_REASON      4   /* a piece of the reason phrase */

/* Limit errors (h1p_parser.limit_error). */
#define H1P_HEAD_BYTES  1
#define H1P_FIELD_COUNT 2
#define H1P_NO_MEMORY   3

/* One field: byte offsets into the head's storage (see h1p_layout). */
typedef struct h1p_field {
    uint32_t name_start;
    uint32_t name_end;
    uint32_t value_start;
    uint32_t value_end;
} h1p_field;

typedef struct h1p_span {
    /* Where the piece is: `at` in the buffer being parsed, or `offset` into the stash. */
    const char *at;
    uint32_t offset;
    uint32_t length;
    uint8_t kind;
    uint8_t stashed;
} h1p_span;

struct h1p_parser;
typedef int (*h1p_head_cb)(struct h1p_parser *parser);
typedef int (*h1p_body_cb)(struct h1p_parser *parser, const char *at, size_t length);

typedef struct h1p_parser {
    llhttp_t llhttp;
    /* The memory lent by the current read (h1p_execute). */
    h1p_field *lent_fields;
    uint32_t lent_capacity;
    /* Fast mode: fields as offsets from `region` (the first name) into the lent `fields`. */
    int slow;
    const char *region;
    uint32_t region_length;
    h1p_field *fields;
    uint32_t field_capacity;
    uint32_t recorded;
    int value_seen;
    const char *reason;
    uint32_t reason_length;
    /* Slow mode: owned spans and stashed bytes. */
    h1p_span *spans;
    uint32_t span_count;
    uint32_t span_capacity;
    char *stash;
    size_t stash_length;
    size_t stash_capacity;
    /* Memory the slow mode's layout owns (freed with the head). */
    uint8_t *joined;
    h1p_field *own_fields;
    /* Limits and what the head has used of them. */
    uint32_t max_fields;
    uint32_t field_count;
    uint64_t max_head_bytes;
    uint64_t head_bytes;
    int field_open;
    /* The status line has been parsed (an error after it is in a header line). */
    int status_done;
    /* Set by the head callback: a 1xx interim response, parsed and forgotten. */
    int interim;
    /* Why a callback stopped the parser (H1P_*), 0 when not for a limit. */
    int limit_error;
    void *context;
    h1p_head_cb on_headers_complete;
    h1p_body_cb on_body;
} h1p_parser;

/* Sets up a parser for responses. `on_headers_complete` returns llhttp's verdict (0 body,
   1 no body, -1 error); `on_body` returns 0 or -1. */
void h1p_init(h1p_parser *parser, void *context, h1p_head_cb on_headers_complete, h1p_body_cb on_body);

/* Starts over after an error (llhttp errors are sticky). */
void h1p_reset(h1p_parser *parser);

/* Arms the parser for the next response, with these limits. */
void h1p_begin(h1p_parser *parser, uint32_t max_fields, uint64_t max_head_bytes);

/* Parses `length` bytes. `fields`/`capacity` is memory lent for this read to record a head in.
   When the read ends inside a head, call h1p_stash before the buffer or the lent memory is
   reused. */
llhttp_errno_t h1p_execute(h1p_parser *parser, const char *data, size_t length, h1p_field *fields, uint32_t capacity);

/* The read ended inside a head: moves it to owned spans and copies the bytes they point at.
   Returns 0, or -1 when memory ran out. */
int h1p_stash(h1p_parser *parser);

/* Where the head's fields are: `storage` holds the names and values the `fields` offsets point
   into, `reason` the reason phrase. Valid until the head callback returns. */
typedef struct h1p_layout {
    const uint8_t *storage;
    uint32_t storage_length;
    const h1p_field *fields;
    uint32_t field_count;
    const uint8_t *reason;
    uint32_t reason_length;
} h1p_layout;

/* Lays the head out (from the head callback): in the read buffer itself in the fast mode, joined
   in owned memory in the slow one. Values exclude the whitespace around them (RFC 9110 section
   5.5). Returns 0, or -1 when memory ran out. */
int h1p_lay_out(h1p_parser *parser, h1p_layout *out);

/* Frees what the parser owns (not the parser itself). */
void h1p_release(h1p_parser *parser);

#endif
