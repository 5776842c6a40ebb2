#include "h1p_parser.h"

#include <stdlib.h>
#include <string.h>

/* The llhttp state is the first member, so a callback's llhttp_t * is the h1p_parser *. */
static h1p_parser *from(llhttp_t *llhttp) { return (h1p_parser *)llhttp; }

/* Moves the spans into memory the parser owns, with room for more. */
static int own_spans(h1p_parser *p, uint32_t capacity) {
    if (capacity < 64) capacity = 64;
    h1p_span *spans;
    if (p->spans_owned) {
        spans = realloc(p->spans, capacity * sizeof *spans);
    } else {
        spans = malloc(capacity * sizeof *spans);
        if (spans && p->span_count) memcpy(spans, p->spans, p->span_count * sizeof *spans);
    }
    if (!spans) {
        p->limit_error = H1P_NO_MEMORY;
        return -1;
    }
    p->spans = spans;
    p->span_capacity = capacity;
    p->spans_owned = 1;
    return 0;
}

static int record(h1p_parser *p, uint8_t kind, const char *at, size_t length) {
    p->head_bytes += length;
    if (p->head_bytes > p->max_head_bytes) {
        p->limit_error = H1P_HEAD_BYTES;
        return -1;
    }
    if (length == 0 && kind != H1P_SPAN_FIELD_START) return 0;
    if (p->span_count == p->span_capacity && own_spans(p, p->span_capacity * 2) != 0) return -1;
    h1p_span *span = &p->spans[p->span_count++];
    span->at = at;
    span->offset = 0;
    span->length = (uint32_t)length;
    span->kind = kind;
    span->stashed = 0;
    return 0;
}

/* Forgets the head recorded so far; owned memory goes back, so an idle parser holds none. */
static void forget_head(h1p_parser *p) {
    if (p->spans_owned) {
        free(p->spans);
        p->spans = NULL;
        p->span_capacity = 0;
        p->spans_owned = 0;
    }
    free(p->stash);
    p->stash = NULL;
    p->stash_length = 0;
    p->stash_capacity = 0;
    p->span_count = 0;
    p->field_count = 0;
    p->field_bytes = 0;
    p->head_bytes = 0;
    p->field_open = 0;
    p->status_done = 0;
}

static int on_message_begin(llhttp_t *llhttp) {
    h1p_parser *p = from(llhttp);
    forget_head(p);
    p->interim = 0;
    return 0;
}

static int on_status(llhttp_t *llhttp, const char *at, size_t length) {
    return record(from(llhttp), H1P_SPAN_REASON, at, length);
}

static int on_status_complete(llhttp_t *llhttp) {
    from(llhttp)->status_done = 1;
    return 0;
}

static int on_header_field(llhttp_t *llhttp, const char *at, size_t length) {
    h1p_parser *p = from(llhttp);
    uint8_t kind = H1P_SPAN_FIELD_MORE;
    if (!p->field_open) {
        p->field_open = 1;
        kind = H1P_SPAN_FIELD_START;
        if (++p->field_count > p->max_fields) {
            p->limit_error = H1P_FIELD_COUNT;
            return -1;
        }
    }
    p->field_bytes += length;
    return record(p, kind, at, length);
}

static int on_header_field_complete(llhttp_t *llhttp) {
    from(llhttp)->field_open = 0;
    return 0;
}

static int on_header_value(llhttp_t *llhttp, const char *at, size_t length) {
    h1p_parser *p = from(llhttp);
    p->field_bytes += length;
    return record(p, H1P_SPAN_VALUE, at, length);
}

static int on_headers_complete(llhttp_t *llhttp) {
    h1p_parser *p = from(llhttp);
    p->field_open = 0;
    int verdict = p->on_headers_complete(p);
    /* The head has been built (or was an interim response): its spans are done with. */
    forget_head(p);
    return verdict;
}

static int on_body(llhttp_t *llhttp, const char *at, size_t length) {
    h1p_parser *p = from(llhttp);
    return p->on_body(p, at, length);
}

static int on_message_complete(llhttp_t *llhttp) {
    /* Pause after each final response, so bytes that follow it are seen by the caller and can be
       refused rather than parsed as the next response. An interim (1xx) response is skipped. */
    return from(llhttp)->interim ? 0 : HPE_PAUSED;
}

static const llhttp_settings_t settings = {
    .on_message_begin = on_message_begin,
    .on_status = on_status,
    .on_status_complete = on_status_complete,
    .on_header_field = on_header_field,
    .on_header_field_complete = on_header_field_complete,
    .on_header_value = on_header_value,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
};

void h1p_init(h1p_parser *p, void *context,
                         h1p_head_cb on_headers, h1p_body_cb on_body_piece) {
    memset(p, 0, sizeof *p);
    llhttp_init(&p->llhttp, HTTP_RESPONSE, &settings);
    p->context = context;
    p->on_headers_complete = on_headers;
    p->on_body = on_body_piece;
    p->max_fields = 256;
    p->max_head_bytes = 64 * 1024;
}

void h1p_reset(h1p_parser *p) {
    forget_head(p);
    llhttp_init(&p->llhttp, HTTP_RESPONSE, &settings);
    p->limit_error = 0;
    p->interim = 0;
}

void h1p_begin(h1p_parser *p, uint32_t max_fields, uint64_t max_head_bytes) {
    forget_head(p);
    p->max_fields = max_fields;
    p->max_head_bytes = max_head_bytes;
    p->limit_error = 0;
    p->interim = 0;
}

llhttp_errno_t h1p_execute(h1p_parser *p, const char *data, size_t length,
                                      h1p_span *spans, uint32_t capacity) {
    if (!p->spans_owned) {
        p->spans = spans;
        p->span_capacity = capacity;
    }
    /* Lent spans stay valid until the caller's next call (h1p_stash copies them out
       of the lent memory when the head continues). */
    return llhttp_execute(&p->llhttp, data, length);
}

int h1p_stash(h1p_parser *p) {
    if (!p->spans_owned && own_spans(p, p->span_count * 2) != 0) return -1;
    for (uint32_t i = 0; i < p->span_count; i++) {
        h1p_span *span = &p->spans[i];
        if (span->stashed) continue;
        if (p->stash_length + span->length > p->stash_capacity) {
            size_t capacity = p->stash_capacity ? p->stash_capacity : 1024;
            while (capacity < p->stash_length + span->length) capacity *= 2;
            char *grown = realloc(p->stash, capacity);
            if (!grown) {
                p->limit_error = H1P_NO_MEMORY;
                return -1;
            }
            p->stash = grown;
            p->stash_capacity = capacity;
        }
        memcpy(p->stash + p->stash_length, span->at, span->length);
        span->offset = (uint32_t)p->stash_length;
        span->at = NULL;
        span->stashed = 1;
        p->stash_length += span->length;
    }
    return 0;
}

static const char *bytes_of(const h1p_parser *p, const h1p_span *span) {
    return span->stashed ? p->stash + span->offset : span->at;
}

static int is_space(uint8_t byte) { return byte == ' ' || byte == '\t'; }

uint32_t h1p_build(h1p_parser *p, uint8_t *storage, h1p_field *fields) {
    uint32_t out = 0;
    uint32_t count = 0;
    h1p_field *field = NULL;
    for (uint32_t i = 0; i < p->span_count; i++) {
        const h1p_span *span = &p->spans[i];
        if (span->kind == H1P_SPAN_REASON) continue;
        if (span->kind == H1P_SPAN_FIELD_START) {
            field = &fields[count++];
            field->name_start = out;
        }
        if (field == NULL) continue; /* llhttp reports a name before any value */
        memcpy(storage + out, bytes_of(p, span), span->length);
        out += span->length;
        if (span->kind == H1P_SPAN_VALUE) {
            field->value_end = out;
        } else {
            field->name_end = out;
            field->value_start = out;
            field->value_end = out;
        }
    }
    /* Optional whitespace around a value is not part of it (RFC 9110 section 5.5). */
    for (uint32_t i = 0; i < count; i++) {
        h1p_field *f = &fields[i];
        while (f->value_start < f->value_end && is_space(storage[f->value_start])) f->value_start++;
        while (f->value_end > f->value_start && is_space(storage[f->value_end - 1])) f->value_end--;
    }
    return count;
}

size_t h1p_reason_length(const h1p_parser *p) {
    size_t length = 0;
    for (uint32_t i = 0; i < p->span_count; i++) {
        if (p->spans[i].kind == H1P_SPAN_REASON) length += p->spans[i].length;
    }
    return length;
}

void h1p_copy_reason(const h1p_parser *p, uint8_t *out) {
    for (uint32_t i = 0; i < p->span_count; i++) {
        const h1p_span *span = &p->spans[i];
        if (span->kind != H1P_SPAN_REASON) continue;
        memcpy(out, bytes_of(p, span), span->length);
        out += span->length;
    }
}

void h1p_release(h1p_parser *p) {
    forget_head(p);
}
