/*
 * h1p (HTTP/1 parser): llhttp's response parsing with the per-field work done in C.
 *
 * llhttp reports a response head as many small callbacks (each piece of each field name and
 * value). Crossing into Swift for each costs more than the parsing itself, so these callbacks
 * stay here: they only record spans (pointers into the buffer being parsed) and enforce the head
 * limits. Swift is called once per head (`on_headers_complete`) and once per body piece.
 *
 * A head that ends within one feed (the usual case) is never copied until it is complete; one
 * that continues into the next feed has its bytes stashed here before the read buffer is reused.
 * `h1p_lay_out` then says where the fields are: in the read buffer itself (one read), or joined
 * in memory the parser owns (several).
 *
 * Loop thread only: one parser per connection, parsed one feed at a time.
 */
#ifndef H1P_PARSER_H
#define H1P_PARSER_H

#include <stddef.h>
#include <stdint.h>
#include <llhttp.h>

/* Span kinds. */
#define H1P_SPAN_FIELD_START 1   /* first piece of a field name: a new field */
#define H1P_SPAN_FIELD_MORE  2   /* a later piece of the same name */
#define H1P_SPAN_VALUE       3   /* a piece of the current field's value */
#define H1P_SPAN_REASON      4   /* a piece of the reason phrase */

/* Limit errors (h1p_parser.limit_error). */
#define H1P_HEAD_BYTES  1
#define H1P_FIELD_COUNT 2
#define H1P_NO_MEMORY   3

typedef struct h1p_span {
    /* Where the piece is: `at` in the buffer being parsed, or `offset` into the stash. */
    const char *at;
    uint32_t offset;
    uint32_t length;
    uint8_t kind;
    uint8_t stashed;
} h1p_span;

/* One field as laid out by h1p_lay_out: byte offsets into the storage. */
typedef struct h1p_field {
    uint32_t name_start;
    uint32_t name_end;
    uint32_t value_start;
    uint32_t value_end;
} h1p_field;

struct h1p_parser;
typedef int (*h1p_head_cb)(struct h1p_parser *parser);
typedef int (*h1p_body_cb)(struct h1p_parser *parser, const char *at, size_t length);

typedef struct h1p_parser {
    llhttp_t llhttp;
    /* Spans of the head being parsed: lent memory for one feed, or owned once a head outgrows
       it or continues into the next feed. */
    h1p_span *spans;
    uint32_t span_count;
    uint32_t span_capacity;
    int spans_owned;
    char *stash;
    size_t stash_length;
    size_t stash_capacity;
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
    /* Memory the slow path of h1p_lay_out owns (freed with the head). */
    uint8_t *joined;
    h1p_field *own_fields;
    void *context;
    h1p_head_cb on_headers_complete;
    h1p_body_cb on_body;
} h1p_parser;

/* Sets up a parser for responses. `on_headers_complete` returns llhttp's verdict (0 body,
   1 no body, -1 error); `on_body` returns 0 or -1. */
void h1p_init(h1p_parser *parser, void *context,
                         h1p_head_cb on_headers_complete, h1p_body_cb on_body);

/* Starts over after an error (llhttp errors are sticky). */
void h1p_reset(h1p_parser *parser);

/* Arms the parser for the next response, with these limits. */
void h1p_begin(h1p_parser *parser, uint32_t max_fields, uint64_t max_head_bytes);

/* Parses `length` bytes; `spans`/`capacity` is memory to record spans in for this feed (used
   unless the head already owns its spans). When the feed ends inside a head, call
   h1p_stash before the lent memory or the data is reused. */
llhttp_errno_t h1p_execute(h1p_parser *parser, const char *data, size_t length,
                                      h1p_span *spans, uint32_t capacity);

/* The feed ended inside a head: copies what the recorded spans point at, so the buffer can be
   reused. Returns 0, or -1 when memory ran out. */
int h1p_stash(h1p_parser *parser);

/* Where the head's fields are once laid out: `storage` holds the names and values that the
   `fields` offsets point into, `reason` the reason phrase. Valid until the head callback returns. */
typedef struct h1p_layout {
    const uint8_t *storage;
    uint32_t storage_length;
    const h1p_field *fields;
    uint32_t field_count;
    const uint8_t *reason;
    uint32_t reason_length;
} h1p_layout;

/* Lays the head out (from the head callback). When the whole head arrived in one read (the usual
   case) `storage` is the region of the read buffer from the first name to the last value and no
   byte is copied; otherwise the pieces are joined in memory the parser owns. `fields` is filled
   when it holds `capacity` fields; beyond that the parser uses memory of its own. Values exclude
   the whitespace around them (RFC 9110 section 5.5). Returns 0, or -1 when memory ran out. */
int h1p_lay_out(h1p_parser *parser, h1p_field *fields, uint32_t capacity, h1p_layout *out);

/* Frees what the parser owns (not the parser itself). */
void h1p_release(h1p_parser *parser);

#endif
