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

static inline __attribute__((always_inline)) int record(h1p_parser *p, uint8_t kind, const char *at, size_t length) {
    p->head_bytes += length;
    if (p->head_bytes > p->max_head_bytes) {
        p->limit_error = H1P_HEAD_BYTES;
        return -1;
    }
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
    free(p->joined);
    p->joined = NULL;
    free(p->own_fields);
    p->own_fields = NULL;
    p->stash_length = 0;
    p->stash_capacity = 0;
    p->span_count = 0;
    p->field_count = 0;
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
    return record(p, kind, at, length);
}

static int on_header_field_complete(llhttp_t *llhttp) {
    from(llhttp)->field_open = 0;
    return 0;
}

static int on_header_value(llhttp_t *llhttp, const char *at, size_t length) {
    return record(from(llhttp), H1P_SPAN_VALUE, at, length);
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

static void trim(const uint8_t *storage, h1p_field *field) {
    while (field->value_start < field->value_end && is_space(storage[field->value_start])) field->value_start++;
    while (field->value_end > field->value_start && is_space(storage[field->value_end - 1])) field->value_end--;
}

int h1p_lay_out(h1p_parser *p, h1p_field *fields, uint32_t capacity, h1p_layout *out) {
    out->storage = NULL;
    out->storage_length = 0;
    out->field_count = p->field_count;
    out->reason = NULL;
    out->reason_length = 0;
    if (p->field_count > capacity) {
        p->own_fields = malloc(p->field_count * sizeof *fields);
        if (!p->own_fields) return -1;
        fields = p->own_fields;
    }
    out->fields = fields;
    /* The fast path: every piece in the buffer being parsed, one span per name and per value,
       in order. The storage is then the region they lie in. */
    int contiguous = 1;
    uint32_t reasons = 0;
    for (uint32_t i = 0; i < p->span_count && contiguous; i++) {
        const h1p_span *span = &p->spans[i];
        if (span->stashed || span->kind == H1P_SPAN_FIELD_MORE) contiguous = 0;
        if (span->kind == H1P_SPAN_REASON) reasons++;
        if (i > 0 && span->kind == H1P_SPAN_VALUE && p->spans[i - 1].kind == H1P_SPAN_VALUE) contiguous = 0;
    }
    if (reasons > 1) contiguous = 0;
    if (contiguous) {
        const uint8_t *region = NULL;
        uint32_t count = 0;
        h1p_field *field = NULL;
        for (uint32_t i = 0; i < p->span_count; i++) {
            const h1p_span *span = &p->spans[i];
            const uint8_t *at = (const uint8_t *)span->at;
            if (span->kind == H1P_SPAN_REASON) {
                out->reason = at;
                out->reason_length = span->length;
                continue;
            }
            if (region == NULL) region = at;
            uint32_t start = (uint32_t)(at - region);
            uint32_t end = start + span->length;
            if (span->kind == H1P_SPAN_FIELD_START) {
                field = &fields[count++];
                field->name_start = start;
                field->name_end = end;
                field->value_start = end;
                field->value_end = end;
            } else if (field != NULL) {
                field->value_start = start;
                field->value_end = end;
            }
            out->storage_length = end;
        }
        out->storage = region;
        for (uint32_t i = 0; i < count; i++) trim(region, &fields[i]);
        return 0;
    }
    /* A head that came in several reads: join the pieces. */
    p->joined = malloc(p->head_bytes ? p->head_bytes : 1);
    if (!p->joined) return -1;
    uint32_t used = 0;
    uint32_t count = 0;
    h1p_field *field = NULL;
    for (uint32_t i = 0; i < p->span_count; i++) {
        const h1p_span *span = &p->spans[i];
        if (span->kind == H1P_SPAN_REASON) continue;
        if (span->kind == H1P_SPAN_FIELD_START) {
            field = &fields[count++];
            field->name_start = used;
        }
        if (field == NULL) continue; /* llhttp reports a name before any value */
        memcpy(p->joined + used, bytes_of(p, span), span->length);
        used += span->length;
        if (span->kind == H1P_SPAN_VALUE) {
            field->value_end = used;
        } else {
            field->name_end = used;
            field->value_start = used;
            field->value_end = used;
        }
    }
    for (uint32_t i = 0; i < count; i++) trim(p->joined, &fields[i]);
    /* The reason phrase goes after the fields. */
    uint32_t reason_start = used;
    for (uint32_t i = 0; i < p->span_count; i++) {
        const h1p_span *span = &p->spans[i];
        if (span->kind != H1P_SPAN_REASON) continue;
        memcpy(p->joined + used, bytes_of(p, span), span->length);
        used += span->length;
    }
    out->storage = p->joined;
    out->storage_length = reason_start;
    out->reason = p->joined + reason_start;
    out->reason_length = used - reason_start;
    return 0;
}

void h1p_release(h1p_parser *p) {
    forget_head(p);
}
