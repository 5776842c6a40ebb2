/*
 * courier._speedups' own declarations, shared by its two files: _speedups.c (the module, its
 * binding to the library, and requests made and sent) and _speedups_responses.c (finished
 * requests turned into Response objects). See _speedups.c for why the module exists.
 */

#ifndef COURIER_SPEEDUPS_H
#define COURIER_SPEEDUPS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>

/* (Shared between the two files, hidden from the rest of the process.) */
#define SPEEDUPS_INTERNAL __attribute__((visibility("hidden")))

/* The functions of include/courier.h used here, handles as void pointers. */
typedef int (*request_create_fn)(void *engine, const char *method, const char *url, void **request);
typedef int (*request_header_fn)(void *request, const char *name, const char *value);
typedef int (*request_remove_header_fn)(void *request, const char *name);
typedef int (*request_set_cookiejar_fn)(void *request, void *jar);
typedef int (*request_enqueue_fn)(void *request);
typedef int (*request_perform_fn)(void *request, void **response);
typedef const char *(*request_errmsg_fn)(const void *request);
typedef void (*request_free_fn)(void *request);
typedef int (*engine_next_done_fn)(void *engine, void **request, void **response, int *code);
typedef int (*response_status_fn)(const void *response);
typedef const uint8_t *(*response_body_fn)(const void *response, size_t *length);
typedef const char *(*response_url_fn)(const void *response);
typedef void (*response_free_fn)(void *response);

/* In the order `bind` takes them (courier/_fast.py's FUNCTIONS). */
struct speedups_library {
    request_create_fn request_create;
    request_header_fn request_add_header;
    request_remove_header_fn request_remove_header;
    request_set_cookiejar_fn request_set_cookiejar;
    request_enqueue_fn request_enqueue;
    request_perform_fn request_perform;
    request_errmsg_fn request_errmsg;
    request_free_fn request_free;
    engine_next_done_fn engine_next_done;
    response_status_fn response_status;
    response_body_fn response_body;
    response_url_fn response_url;
    response_free_fn response_free;
};
SPEEDUPS_INTERNAL extern struct speedups_library library;

/* What `bind` was given: the Response class, the live-handles dict, and the dicts keyed by
 * request address whose entries `_free_request` must drop (a request in one of them is left to
 * Python). */
SPEEDUPS_INTERNAL extern PyObject *response_class;
SPEEDUPS_INTERNAL extern PyObject *live_handles;
SPEEDUPS_INTERNAL extern PyObject *registries;
SPEEDUPS_INTERNAL extern PyObject *empty_tuple;

SPEEDUPS_INTERNAL extern PyObject *name_status, *name_body, *name_url, *name_url_object, *name_request, *name_text;
SPEEDUPS_INTERNAL extern PyObject *name_handle, *name_owned, *name_keeper, *name_key, *name_done, *name_set_result;

SPEEDUPS_INTERNAL int bound(void);
SPEEDUPS_INTERNAL void free_request(void *request);
SPEEDUPS_INTERNAL PyObject *owned(void *handle);

/* The module's functions on finished requests (_speedups_responses.c). */
SPEEDUPS_INTERNAL PyObject *speedups_collect(PyObject *module, PyObject *args);
SPEEDUPS_INTERNAL PyObject *speedups_release(PyObject *module, PyObject *handle_object);

#endif
