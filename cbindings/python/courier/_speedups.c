/*
 * courier._speedups: the asyncio hot path of the Python package in C.
 *
 * Why: a request sent and collected through ctypes spent about 34,000 instructions a request in
 * ctypes' argument and result conversion alone (nine calls), more than the library's own work on
 * the caller's thread. These two functions do what `Engine._enqueue` and `Engine._collect` do
 * for a plain request (headers and a cookie jar; nothing Python has to be called back for) in one
 * call each. Everything else stays in Python, and the package works without this module (it is
 * optional in the build; COURIER_PYTHON_SPEEDUPS=0 turns it off).
 *
 * It does not link against libcourier: `bind` hands it the addresses of the functions the ctypes
 * layer already loaded, so both always use the one library the package found. The GIL is
 * released around each library call, as ctypes does (a library lock may be held by the loop
 * thread while it waits for the GIL to run a Python callback).
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>

/* The functions of include/courier.h used here, handles as void pointers. */
typedef int (*request_create_fn)(void *engine, const char *method, const char *url, void **request);
typedef int (*request_header_fn)(void *request, const char *name, const char *value);
typedef int (*request_remove_header_fn)(void *request, const char *name);
typedef int (*request_set_cookiejar_fn)(void *request, void *jar);
typedef int (*request_enqueue_fn)(void *request);
typedef const char *(*request_errmsg_fn)(const void *request);
typedef void (*request_free_fn)(void *request);
typedef int (*engine_next_done_fn)(void *engine, void **request, void **response, int *code);
typedef int (*response_status_fn)(const void *response);
typedef const uint8_t *(*response_body_fn)(const void *response, size_t *length);
typedef const char *(*response_url_fn)(const void *response);
typedef void (*response_free_fn)(void *response);

/* In the order `bind` takes them (courier/_fast.py's FUNCTIONS). */
static struct {
    request_create_fn request_create;
    request_header_fn request_add_header;
    request_remove_header_fn request_remove_header;
    request_set_cookiejar_fn request_set_cookiejar;
    request_enqueue_fn request_enqueue;
    request_errmsg_fn request_errmsg;
    request_free_fn request_free;
    engine_next_done_fn engine_next_done;
    response_status_fn response_status;
    response_body_fn response_body;
    response_url_fn response_url;
    response_free_fn response_free;
} library;

#define FUNCTION_COUNT (sizeof(library) / sizeof(void *))

/* What `bind` was given: the Response class, the live-handles dict, and the dicts keyed by
 * request address whose entries `_free_request` must drop (a request in one of them is left to
 * Python). */
static PyObject *response_class;
static PyObject *live_handles;
static PyObject *registries;
static PyObject *empty_tuple;

static PyObject *name_status, *name_body, *name_url, *name_url_object, *name_request, *name_text;
static PyObject *name_handle, *name_owned, *name_keeper, *name_key, *name_done, *name_set_result;

static int bound(void)
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

static void free_request(void *request)
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

/* submit(engine, method, url, headers, jar) -> request address, or (code, message) when the
 * library refused a step (the handle freed). `headers` an iterable of (name, value) or None;
 * `jar` a cookie jar's address or None. */
static PyObject *speedups_submit(PyObject *module, PyObject *args)
{
    PyObject *engine_object, *method_object, *url_object, *headers, *jar_object;
    (void)module;
    if (!PyArg_ParseTuple(args, "OUUOO", &engine_object, &method_object, &url_object, &headers, &jar_object))
        return NULL;
    if (!bound())
        return NULL;
    void *engine = PyLong_AsVoidPtr(engine_object);
    void *jar = jar_object == Py_None ? NULL : PyLong_AsVoidPtr(jar_object);
    if (PyErr_Occurred())
        return NULL;
    const char *method = text_of(method_object, "the method");
    const char *url = method != NULL ? text_of(url_object, "the URL") : NULL;
    if (url == NULL)
        return NULL;
    void *request = NULL;
    int code;
    Py_BEGIN_ALLOW_THREADS
    code = library.request_create(engine, method, url, &request);
    Py_END_ALLOW_THREADS
    if (code != 0)
        return failure(request, code);
    if (headers != Py_None) {
        code = add_headers(request, headers);
        if (code < 0) {
            free_request(request);
            return NULL;
        }
        if (code > 0)
            return failure(request, code);
    }
    if (jar != NULL && (code = library.request_set_cookiejar(request, jar)) != 0)
        return failure(request, code);
    Py_BEGIN_ALLOW_THREADS
    code = library.request_enqueue(request);
    Py_END_ALLOW_THREADS
    if (code != 0)
        return failure(request, code);
    return PyLong_FromVoidPtr(request);
}

/* Whether one of the registries holds the request (its freeing is then Python's). */
static int tracked(PyObject *key)
{
    for (Py_ssize_t index = 0; index < PyTuple_GET_SIZE(registries); index++) {
        PyObject *registry = PyTuple_GET_ITEM(registries, index);
        if (PyDict_GET_SIZE(registry) > 0) {
            int found = PyDict_Contains(registry, key);
            if (found != 0)
                return found;
        }
    }
    return 0;
}

/* The finished response a handle holds, as Response._of(handle) makes it (owned). */
static PyObject *response_of(void *handle, PyObject *key)
{
    size_t length = 0;
    const uint8_t *body = library.response_body(handle, &length);
    const char *url = library.response_url(handle);
    PyObject *self = PyBaseObject_Type.tp_new((PyTypeObject *)response_class, empty_tuple, NULL);
    if (self == NULL)
        return NULL;
    PyObject *status = PyLong_FromLong(library.response_status(handle));
    PyObject *content = PyBytes_FromStringAndSize((const char *)body, (Py_ssize_t)length);
    PyObject *text = PyUnicode_DecodeUTF8(url ? url : "", url ? (Py_ssize_t)strlen(url) : 0, "surrogateescape");
    int failed = status == NULL || content == NULL || text == NULL
        || PyObject_SetAttr(self, name_status, status) < 0
        || PyObject_SetAttr(self, name_body, content) < 0
        || PyObject_SetAttr(self, name_url, text) < 0
        || PyObject_SetAttr(self, name_url_object, Py_None) < 0
        || PyObject_SetAttr(self, name_request, Py_None) < 0
        || PyObject_SetAttr(self, name_text, Py_None) < 0
        || PyObject_SetAttr(self, name_handle, key) < 0
        || PyObject_SetAttr(self, name_owned, Py_True) < 0
        || PyObject_SetAttr(self, name_keeper, Py_None) < 0
        || PyObject_SetAttr(self, name_key, key) < 0;
    Py_XDECREF(status);
    Py_XDECREF(content);
    Py_XDECREF(text);
    if (failed) {
        Py_DECREF(self);
        return NULL;
    }
    return self;
}

/* The fast completion of one request: its future's result set, its handle freed. 1 when done;
 * 0 when it is Python's to finish (an error, a cancelled future, a request with Python state, or
 * a failure before anything was taken: Python's path meets it again and raises it); -1 when done
 * but setting the result raised. */
static int finish(PyObject *futures, void *request, void *response, int code)
{
    if (code != 0 || response == NULL)
        return 0;
    PyObject *key = PyLong_FromVoidPtr(request);
    PyObject *future = key != NULL ? PyDict_GetItemWithError(futures, key) : NULL;
    Py_XINCREF(future);
    PyObject *done = future != NULL && tracked(key) == 0 ? PyObject_CallMethodNoArgs(future, name_done) : NULL;
    PyObject *response_key = done == Py_False ? PyLong_FromVoidPtr(response) : NULL;
    PyObject *result = response_key != NULL ? response_of(response, response_key) : NULL;
    int outcome = 0;
    if (result != NULL && PyDict_SetItem(live_handles, response_key, response_key) == 0) {
        if (PyDict_DelItem(futures, key) == 0) {
            free_request(request);
            PyObject *set = PyObject_CallMethodOneArg(future, name_set_result, result);
            outcome = set == NULL ? -1 : 1;
            Py_XDECREF(set);
        } else {
            PyDict_DelItem(live_handles, response_key);
        }
    }
    if (outcome == 0)
        PyErr_Clear();
    Py_XDECREF(result);
    Py_XDECREF(response_key);
    Py_XDECREF(done);
    Py_XDECREF(future);
    Py_XDECREF(key);
    return outcome;
}

/* collect(engine, futures, leftovers): the finished requests' futures resolved; the completions
 * left to Python appended to `leftovers` as (request, response or None, code) for the caller to
 * finish (also when this raises). Stops when `futures` is empty: nothing else can be finishing
 * (a leftover keeps its future in `futures`, so it never stops the loop early). */
static PyObject *speedups_collect(PyObject *module, PyObject *args)
{
    PyObject *engine_object, *futures, *leftovers;
    (void)module;
    if (!PyArg_ParseTuple(args, "OO!O!", &engine_object, &PyDict_Type, &futures, &PyList_Type, &leftovers))
        return NULL;
    if (!bound())
        return NULL;
    void *engine = PyLong_AsVoidPtr(engine_object);
    if (engine == NULL)
        return PyErr_Occurred() ? NULL : PyErr_Format(PyExc_ValueError, "collect: no engine");
    for (;;) {
        void *request = NULL, *response = NULL;
        int code = 0, more;
        Py_BEGIN_ALLOW_THREADS
        more = library.engine_next_done(engine, &request, &response, &code) == 0;
        Py_END_ALLOW_THREADS
        if (!more)
            break;
        int finished = finish(futures, request, response, code);
        if (finished < 0)
            return NULL;
        if (finished == 0) {
            PyObject *entry = Py_BuildValue("(NNi)", PyLong_FromVoidPtr(request),
                                            response != NULL ? PyLong_FromVoidPtr(response) : Py_NewRef(Py_None), code);
            int appended = entry != NULL ? PyList_Append(leftovers, entry) : -1;
            Py_XDECREF(entry);
            if (appended < 0)
                return NULL;
        }
        if (PyDict_GET_SIZE(futures) == 0)
            break;
    }
    Py_RETURN_NONE;
}

/* release(response): frees a response handle (Response.__del__'s, when its handle is its own). */
static PyObject *speedups_release(PyObject *module, PyObject *handle_object)
{
    (void)module;
    if (!bound())
        return NULL;
    void *handle = PyLong_AsVoidPtr(handle_object);
    if (handle == NULL)
        return PyErr_Occurred() ? NULL : PyErr_Format(PyExc_ValueError, "release: no response");
    Py_BEGIN_ALLOW_THREADS
    library.response_free(handle);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"bind", speedups_bind, METH_VARARGS, "bind(addresses, Response, live_handles, registries): the library's functions."},
    {"submit", speedups_submit, METH_VARARGS, "submit(engine, method, url, headers, jar): a plain request enqueued."},
    {"release", speedups_release, METH_O, "release(response): a response handle freed."},
    {"collect", speedups_collect, METH_VARARGS, "collect(engine, futures, leftovers): finished requests' futures resolved."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT, "courier._speedups", "The asyncio hot path of courier in C.", -1, methods,
    NULL, NULL, NULL, NULL,
};

static PyObject *intern(const char *text)
{
    return PyUnicode_InternFromString(text);
}

PyMODINIT_FUNC PyInit__speedups(void)
{
    empty_tuple = PyTuple_New(0);
    name_status = intern("status");
    name_body = intern("body");
    name_url = intern("_url");
    name_url_object = intern("_url_object");
    name_request = intern("_request");
    name_text = intern("_text");
    name_handle = intern("_handle");
    name_owned = intern("_owned");
    name_keeper = intern("_keeper");
    name_key = intern("_key");
    name_done = intern("done");
    name_set_result = intern("set_result");
    if (empty_tuple == NULL || name_set_result == NULL)
        return NULL;
    return PyModule_Create(&module_definition);
}
