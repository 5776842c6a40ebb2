#include "h1p_parser.h"

#include <stdlib.h>
#include <string.h>

/* The llhttp state is the first member, so a callback's llhttp_t * is the h1p_parser *. */
static h1p_parser *from(llhttp_t *llhttp) { return (h1p_parser *)llhttp; }

#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define LIKELY(x) __builtin_expect(!!(x), 1)

/* ---- Slow mode: owned spans ------------------------------------------------------------------ */

static __attribute__((noinline, cold)) int grow_spans(h1p_parser *p) {
    uint32_t capacity = p->span_capacity ? p->span_capacity * 2 : 64;
    h1p_span *spans = realloc(p->spans, capacity * sizeof *spans);
    if (!spans) {
        p->limit_error = H1P_NO_MEMORY;
        return -1;
    }
    p->spans = spans;
    p->span_capacity = capacity;
    return 0;
}

static __attribute__((noinline, cold)) int add_span(h1p_parser *p, uint8_t kind, const char *at, size_t length) {
    if (p->span_count == p->span_capacity && grow_spans(p) != 0) return -1;
    h1p_span *span = &p->spans[p->span_count++];
    span->at = at;
    span->offset = 0;
    span->length = (uint32_t)length;
    span->kind = kind;
    span->stashed = 0;
    return 0;
}

/* Leaves the fast mode: what was recorded as offsets becomes spans. */
static __attribute__((noinline, cold)) int go_slow(h1p_parser *p) {
    p->slow = 1;
    if (p->reason != NULL && add_span(p, H1P_SPAN_REASON, p->reason, p->reason_length) != 0) return -1;
    for (uint32_t i = 0; i < p->recorded; i++) {
        const h1p_field *f = &p->fields[i];
        if (add_span(p, H1P_SPAN_FIELD_START, p->region + f->name_start, f->name_end - f->name_start) != 0) return -1;
        int has_value = i + 1 < p->recorded || p->value_seen;
        if (has_value && add_span(p, H1P_SPAN_VALUE, p->region + f->value_start, f->value_end - f->value_start) != 0) return -1;
    }
    p->fields = NULL;
    p->field_capacity = 0;
    return 0;
}

/* ---- Callbacks ----------------------------------------------------------------------------- */

static inline int count_bytes(h1p_parser *p, size_t length) {
    p->head_bytes += length;
    if (UNLIKELY(p->head_bytes > p->max_head_bytes)) {
        p->limit_error = H1P_HEAD_BYTES;
        return -1;
    }
    return 0;
}

/* Forgets the head recorded so far; owned memory goes back, so an idle parser holds none. */
static void forget_head(h1p_parser *p) {
    if (UNLIKELY(p->spans != NULL || p->stash != NULL || p->joined != NULL || p->own_fields != NULL)) {
        free(p->spans);
        p->spans = NULL;
        p->span_capacity = 0;
        free(p->stash);
        p->stash = NULL;
        p->stash_capacity = 0;
        free(p->joined);
        p->joined = NULL;
        free(p->own_fields);
        p->own_fields = NULL;
    }
    p->slow = 0;
    p->fields = p->lent_fields;
    p->field_capacity = p->lent_capacity;
    p->region = NULL;
    p->region_length = 0;
    p->recorded = 0;
    p->value_seen = 0;
    p->reason = NULL;
    p->reason_length = 0;
    p->span_count = 0;
    p->stash_length = 0;
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
    h1p_parser *p = from(llhttp);
    if (count_bytes(p, length) != 0) return -1;
    if (!p->slow) {
        if (p->reason == NULL) {
            p->reason = at;
            p->reason_length = (uint32_t)length;
            return 0;
        }
        if (go_slow(p) != 0) return -1;
    }
    return add_span(p, H1P_SPAN_REASON, at, length);
}

static int on_status_complete(llhttp_t *llhttp) {
    from(llhttp)->status_done = 1;
    return 0;
}

/* Fast mode: a new field's name, as offsets from the region. */
static inline __attribute__((always_inline)) void record_name(h1p_parser *p, const char *at, size_t length) {
    uint32_t start = (uint32_t)(at - p->region);
    uint32_t end = start + (uint32_t)length;
    h1p_field *f = &p->fields[p->recorded++];
    f->name_start = start;
    f->name_end = end;
    f->value_start = end;
    f->value_end = end;
    p->value_seen = 0;
    p->region_length = end;
}

/* Fast mode: the value of the field recorded last. */
static inline __attribute__((always_inline)) void record_value(h1p_parser *p, const char *at, size_t length) {
    h1p_field *f = &p->fields[p->recorded - 1];
    uint32_t start = (uint32_t)(at - p->region);
    f->value_start = start;
    f->value_end = start + (uint32_t)length;
    p->value_seen = 1;
    p->region_length = f->value_end;
}

/* Everything but the fast path of on_header_field: limits, continued names, the slow mode. */
static __attribute__((noinline)) int header_field_slow(h1p_parser *p, const char *at, size_t length) {
    if (count_bytes(p, length) != 0) return -1;
    int starts = !p->field_open;
    if (starts) {
        p->field_open = 1;
        if (++p->field_count > p->max_fields) {
            p->limit_error = H1P_FIELD_COUNT;
            return -1;
        }
    }
    if (!p->slow) {
        if (starts && p->recorded < p->field_capacity) {
            if (p->region == NULL) p->region = at;
            record_name(p, at, length);
            return 0;
        }
        if (go_slow(p) != 0) return -1;
    }
    return add_span(p, starts ? H1P_SPAN_FIELD_START : H1P_SPAN_FIELD_MORE, at, length);
}

static int on_header_field(llhttp_t *llhttp, const char *at, size_t length) {
    h1p_parser *p = from(llhttp);
    /* The usual case, kept short: a new field of a head within one read, within every limit. */
    uint64_t bytes = p->head_bytes + length;
    if (LIKELY(!p->field_open && !p->slow && p->region != NULL && p->recorded < p->field_capacity
               && bytes <= p->max_head_bytes && p->field_count < p->max_fields)) {
        p->head_bytes = bytes;
        p->field_open = 1;
        p->field_count++;
        record_name(p, at, length);
        return 0;
    }
    return header_field_slow(p, at, length);
}

static int on_header_field_complete(llhttp_t *llhttp) {
    from(llhttp)->field_open = 0;
    return 0;
}

static __attribute__((noinline)) int header_value_slow(h1p_parser *p, const char *at, size_t length) {
    if (count_bytes(p, length) != 0) return -1;
    if (!p->slow) {
        if (!p->value_seen && p->recorded > 0) {
            record_value(p, at, length);
            return 0;
        }
        if (go_slow(p) != 0) return -1;
    }
    return add_span(p, H1P_SPAN_VALUE, at, length);
}

static int on_header_value(llhttp_t *llhttp, const char *at, size_t length) {
    h1p_parser *p = from(llhttp);
    uint64_t bytes = p->head_bytes + length;
    if (LIKELY(!p->slow && !p->value_seen && p->recorded > 0 && bytes <= p->max_head_bytes)) {
        p->head_bytes = bytes;
        record_value(p, at, length);
        return 0;
    }
    return header_value_slow(p, at, length);
}

static int on_headers_complete(llhttp_t *llhttp) {
    h1p_parser *p = from(llhttp);
    p->field_open = 0;
    int verdict = p->on_headers_complete(p);
    /* The head has been taken (or was an interim response): its memory goes. */
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

/* ---- API ----------------------------------------------------------------------------------- */

void h1p_init(h1p_parser *p, void *context, h1p_head_cb on_headers, h1p_body_cb on_body_piece) {
    memset(p, 0, sizeof *p);
    llhttp_init(&p->llhttp, HTTP_RESPONSE, &settings);
    p->context = context;
    p->on_headers_complete = on_headers;
    p->on_body = on_body_piece;
    p->max_fields = 10000;
    p->max_head_bytes = 300 * 1024;
}

void h1p_reset(h1p_parser *p) {
    forget_head(p);
    llhttp_init(&p->llhttp, HTTP_RESPONSE, &settings);
    p->limit_error = 0;
    p->interim = 0;
}

void h1p_begin(h1p_parser *p, uint32_t max_fields, uint64_t max_head_bytes) {
    p->lent_fields = NULL;
    p->lent_capacity = 0;
    forget_head(p);
    p->max_fields = max_fields;
    p->max_head_bytes = max_head_bytes;
    p->limit_error = 0;
    p->interim = 0;
}

llhttp_errno_t h1p_execute(h1p_parser *p, const char *data, size_t length, h1p_field *fields, uint32_t capacity) {
    p->lent_fields = fields;
    p->lent_capacity = capacity;
    if (!p->slow) {
        p->fields = fields;
        p->field_capacity = capacity;
    }
    return llhttp_execute(&p->llhttp, data, length);
}

int h1p_stash(h1p_parser *p) {
    if (!p->slow && go_slow(p) != 0) return -1;
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

static int is_space(uint8_t byte) { return byte == ' ' || byte == '\t'; }

static void trim(const uint8_t *storage, h1p_field *field) {
    while (field->value_start < field->value_end && is_space(storage[field->value_start])) field->value_start++;
    while (field->value_end > field->value_start && is_space(storage[field->value_end - 1])) field->value_end--;
}

static const char *bytes_of(const h1p_parser *p, const h1p_span *span) {
    return span->stashed ? p->stash + span->offset : span->at;
}

int h1p_lay_out(h1p_parser *p, h1p_layout *out) {
    if (!p->slow) {
        const uint8_t *region = (const uint8_t *)p->region;
        for (uint32_t i = 0; i < p->recorded; i++) trim(region, &p->fields[i]);
        out->storage = region;
        out->storage_length = p->region_length;
        out->fields = p->fields;
        out->field_count = p->recorded;
        out->reason = (const uint8_t *)p->reason;
        out->reason_length = p->reason_length;
        return 0;
    }
    /* Several reads, or more fields than the lent memory: join the pieces. */
    p->own_fields = malloc((p->field_count ? p->field_count : 1) * sizeof *p->own_fields);
    p->joined = malloc(p->head_bytes ? p->head_bytes : 1);
    if (!p->own_fields || !p->joined) return -1;
    uint32_t used = 0;
    uint32_t count = 0;
    h1p_field *field = NULL;
    for (uint32_t i = 0; i < p->span_count; i++) {
        const h1p_span *span = &p->spans[i];
        if (span->kind == H1P_SPAN_REASON) continue;
        if (span->kind == H1P_SPAN_FIELD_START) {
            field = &p->own_fields[count++];
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
    for (uint32_t i = 0; i < count; i++) trim(p->joined, &p->own_fields[i]);
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
    out->fields = p->own_fields;
    out->field_count = count;
    out->reason = p->joined + reason_start;
    out->reason_length = used - reason_start;
    return 0;
}

void h1p_release(h1p_parser *p) {
    forget_head(p);
}
