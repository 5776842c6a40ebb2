/*
 * courier._speedups: the hot path of the Python package in C (this file: the module, its binding to
 * the library, requests made, sent or waited for; _speedups_responses.c: finished requests).
 *
 * Why: a request sent and collected through ctypes spent about 34,000 instructions a request in
 * ctypes' argument and result conversion alone (nine calls), more than the library's own work on
 * the caller's thread. These functions do what `Engine._enqueue` and `Engine._collect` (and the
 * blocking `Engine.request`) do for a plain request (headers and a cookie jar; nothing Python has
 * to be called back for) in one call each. Everything else stays in Python, and the package works
 * without this module (it is optional in the build; COURIER_PYTHON_SPEEDUPS=0 turns it off).
 *
 * It does not link against libcourier: `bind` hands it the addresses of the functions the ctypes
 * layer already loaded, so both always use the one library the package found. The GIL is
 * released around each call that can wait (create, enqueue, perform, next_done, the frees), as
 * ctypes does: a library lock may be held by the loop thread while it waits for the GIL to run
 * a Python callback. The setters of a request not yet sent (headers, the jar) and the getters of
 * a finished one touch only that request's own state and run with it held.
 */

#include "_speedups.h"

/* (The state _speedups.h declares.) */
struct speedups_library library;

#define FUNCTION_COUNT (sizeof(library) / sizeof(void *))

PyObject *response_class;
PyObject *live_handles;
PyObject *registries;
PyObject *empty_tuple;

PyObject *name_status, *name_body, *name_url, *name_url_object, *name_request, *name_text;
PyObject *name_handle, *name_owned, *name_keeper, *name_key, *name_done, *name_set_result;

int bound(void)
{
    if (response_class != NULL)
        return 1;
    PyErr_SetString(PyExc_RuntimeError, "courier._speedups is not bound to the library");
    return 0;
}

/* bind(addresses, Response, live_handles, registries) */
static PyObject *speedups_bind(PyObject *module, PyObject *args)
{
    PyObject *addresses, *response, *live, *tracked;
    (void)module;
    if (!PyArg_ParseTuple(args, "O!OO!O!", &PyTuple_Type, &addresses, &response, &PyDict_Type, &live,
                          &PyTuple_Type, &tracked))
        return NULL;
    if (!PyType_Check(response)) {
        PyErr_SetString(PyExc_TypeError, "bind: the Response class expected");
        return NULL;
    }
    if ((size_t)PyTuple_GET_SIZE(addresses) != FUNCTION_COUNT) {
        PyErr_Format(PyExc_ValueError, "bind: %zu function addresses expected", (size_t)FUNCTION_COUNT);
        return NULL;
    }
    for (Py_ssize_t index = 0; index < PyTuple_GET_SIZE(tracked); index++) {
        if (!PyDict_Check(PyTuple_GET_ITEM(tracked, index))) {
            PyErr_SetString(PyExc_TypeError, "bind: the registries are dicts");
            return NULL;
        }
    }
    void *functions[FUNCTION_COUNT];
    for (size_t index = 0; index < FUNCTION_COUNT; index++) {
        functions[index] = PyLong_AsVoidPtr(PyTuple_GET_ITEM(addresses, (Py_ssize_t)index));
        if (functions[index] == NULL) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "bind: a function address is NULL");
            return NULL;
        }
    }
    memcpy(&library, functions, sizeof(library));
    Py_INCREF(response);
    Py_XSETREF(response_class, response);
    Py_INCREF(live);
    Py_XSETREF(live_handles, live);
    Py_INCREF(tracked);
    Py_XSETREF(registries, tracked);
    Py_RETURN_NONE;
}

void free_request(void *request)
{
    Py_BEGIN_ALLOW_THREADS
    library.request_free(request);
    Py_END_ALLOW_THREADS
}

/* The failure of a step: (code, message), the handle (when one was made) freed. */
static PyObject *failure(void *request, int code)
{
    PyObject *result = Py_BuildValue("(is)", code, request != NULL ? library.request_errmsg(request) : NULL);
    if (request != NULL)
        free_request(request);
    return result;
}

/* A str's UTF-8 (kept by the str), or NULL with ValueError when it holds a NUL, which C would
 * read as its end: `what` names it. */
static const char *text_of(PyObject *text, const char *what)
{
    Py_ssize_t size;
    const char *utf8 = PyUnicode_AsUTF8AndSize(text, &size);
    if (utf8 != NULL && strlen(utf8) != (size_t)size) {
        PyErr_Format(PyExc_ValueError, "embedded null character in %s", what);
        return NULL;
    }
    return utf8;
}

/* Each (name, value) of `headers` onto the request: a None value removes the field, any other
 * is sent as str(value). 0, or -1 with a Python exception, or a library code above 0. */
static int add_headers(void *request, PyObject *headers)
{
    PyObject *iterator = PyObject_GetIter(headers);
    if (iterator == NULL)
        return -1;
    int code = 0;
    PyObject *pair;
    while (code == 0 && (pair = PyIter_Next(iterator)) != NULL) {
        PyObject *name = NULL, *value = NULL, *text = NULL;
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            PyErr_SetString(PyExc_TypeError, "headers: (name, value) pairs expected");
            code = -1;
        } else {
            name = PyTuple_GET_ITEM(pair, 0);
            value = PyTuple_GET_ITEM(pair, 1);
            const char *name_utf8 = PyUnicode_Check(name) ? text_of(name, "a header name") : NULL;
            if (name_utf8 == NULL) {
                if (!PyErr_Occurred())
                    PyErr_SetString(PyExc_TypeError, "headers: a field name is a str");
                code = -1;
            } else if (value == Py_None) {
                code = library.request_remove_header(request, name_utf8);
            } else {
                text = PyObject_Str(value);
                const char *value_utf8 = text != NULL ? text_of(text, "a header value") : NULL;
                if (value_utf8 == NULL)
                    code = -1;
                else
                    code = library.request_add_header(request, name_utf8, value_utf8);
            }
        }
        Py_XDECREF(text);
        Py_DECREF(pair);
    }
    Py_DECREF(iterator);
    if (code == 0 && PyErr_Occurred())
        code = -1;
    return code;
}

/* The request `args` (engine, method, url, headers, jar) describe, made: `headers` an iterable of
 * (name, value) or None, `jar` a cookie jar's address or None. NULL when it could not be, with
 * *result what the caller returns: (code, message) when the library refused a step (the handle
 * freed), or NULL with an exception. */
static void *prepared(PyObject *args, PyObject **result)
{
    PyObject *engine_object, *method_object, *url_object, *headers, *jar_object;
    *result = NULL;
    if (!PyArg_ParseTuple(args, "OUUOO", &engine_object, &method_object, &url_object, &headers, &jar_object) || !bound())
        return NULL;
    void *engine = PyLong_AsVoidPtr(engine_object);
    void *jar = jar_object == Py_None ? NULL : PyLong_AsVoidPtr(jar_object);
    const char *method = PyErr_Occurred() ? NULL : text_of(method_object, "the method");
    const char *url = method != NULL ? text_of(url_object, "the URL") : NULL;
    if (url == NULL)
        return NULL;
    void *request = NULL;
    int code;
    Py_BEGIN_ALLOW_THREADS
    code = library.request_create(engine, method, url, &request);
    Py_END_ALLOW_THREADS
    if (code == 0 && headers != Py_None)
        code = add_headers(request, headers);
    if (code == 0 && jar != NULL)
        code = library.request_set_cookiejar(request, jar);
    if (code == 0)
        return request;
    if (code < 0)
        free_request(request);
    else
        *result = failure(request, code);
    return NULL;
}

/* The request `args` describe, sent: enqueued (`wait` 0), giving its address; or performed with the
 * GIL released (`wait` 1), giving its Response, or (code, message, Response or None) when it failed
 * (an unaccepted status keeps its response), the request freed. A step the library refused
 * gives (code, message), the handle freed. */
static PyObject *sent(PyObject *args, int wait)
{
    PyObject *result;
    void *request = prepared(args, &result);
    if (request == NULL)
        return result;
    void *response = NULL;
    int code;
    Py_BEGIN_ALLOW_THREADS
    code = wait ? library.request_perform(request, &response) : library.request_enqueue(request);
    Py_END_ALLOW_THREADS
    if (!wait)
        return code != 0 ? failure(request, code) : PyLong_FromVoidPtr(request);
    PyObject *made = response != NULL ? owned(response) : Py_NewRef(Py_None);
    if (made != NULL && code != 0)
        made = Py_BuildValue("(isN)", code, library.request_errmsg(request), made);
    free_request(request);
    return made;
}

/* submit(engine, method, url, headers, jar): see `sent`. */
static PyObject *speedups_submit(PyObject *module, PyObject *args)
{
    (void)module;
    return sent(args, 0);
}

/* perform(engine, method, url, headers, jar): see `sent`. */
static PyObject *speedups_perform(PyObject *module, PyObject *args)
{
    (void)module;
    return sent(args, 1);
}

static PyMethodDef methods[] = {
    {"bind", speedups_bind, METH_VARARGS, "bind(addresses, Response, live_handles, registries): the library's functions."},
    {"submit", speedups_submit, METH_VARARGS, "submit(engine, method, url, headers, jar): a plain request enqueued."},
    {"perform", speedups_perform, METH_VARARGS, "perform(engine, method, url, headers, jar): a plain request waited for."},
    {"release", speedups_release, METH_O, "release(response): a response handle freed."},
    {"collect", speedups_collect, METH_VARARGS, "collect(engine, futures, leftovers): finished requests' futures resolved."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT, "courier._speedups", "The hot path of courier's plain requests in C.", -1, methods,
    NULL, NULL, NULL, NULL,
};

/* The attribute and method names the module looks up, interned once. */
static const struct {
    PyObject **slot;
    const char *text;
} names[] = {
    {&name_status, "status"}, {&name_body, "body"}, {&name_url, "_url"}, {&name_url_object, "_url_object"},
    {&name_request, "_request"}, {&name_text, "_text"}, {&name_handle, "_handle"}, {&name_owned, "_owned"},
    {&name_keeper, "_keeper"}, {&name_key, "_key"}, {&name_done, "done"}, {&name_set_result, "set_result"},
};

PyMODINIT_FUNC PyInit__speedups(void)
{
    empty_tuple = PyTuple_New(0);
    if (empty_tuple == NULL)
        return NULL;
    for (size_t index = 0; index < sizeof(names) / sizeof(names[0]); index++) {
        *names[index].slot = PyUnicode_InternFromString(names[index].text);
        if (*names[index].slot == NULL)
            return NULL;
    }
    return PyModule_Create(&module_definition);
}
