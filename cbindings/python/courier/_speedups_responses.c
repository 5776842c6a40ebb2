/*
 * courier._speedups, finished requests: each turned into a Response (as Response._of makes one)
 * and its future resolved, or handed back to Python's path (see _speedups.c).
 */

#include "_speedups.h"

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

/* A Response for `handle`, listed among the live handles (so it frees the handle when it goes),
 * or NULL with an exception and the handle left as it was. */
static PyObject *listed(void *handle)
{
    PyObject *key = PyLong_FromVoidPtr(handle);
    PyObject *made = key != NULL ? response_of(handle, key) : NULL;
    if (made != NULL && PyDict_SetItem(live_handles, key, key) < 0)
        Py_CLEAR(made);  /* (not listed: its going frees nothing) */
    Py_XDECREF(key);
    return made;
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
    PyObject *result = done == Py_False ? listed(response) : NULL;
    int outcome = 0;
    if (result != NULL && PyDict_DelItem(futures, key) == 0) {
        free_request(request);
        PyObject *set = PyObject_CallMethodOneArg(future, name_set_result, result);
        outcome = set == NULL ? -1 : 1;
        Py_XDECREF(set);
    } else if (result != NULL) {
        /* (Not taken after all: Python's path makes its own Response from the handle and lists
         * it again; this one must free nothing as it goes.) */
        PyObject_SetAttr(result, name_owned, Py_False);
    }
    if (outcome == 0)
        PyErr_Clear();
    Py_XDECREF(result);
    Py_XDECREF(done);
    Py_XDECREF(future);
    Py_XDECREF(key);
    return outcome;
}

/* collect(engine, futures, leftovers): the finished requests' futures resolved; the completions
 * left to Python appended to `leftovers` as (request, response or None, code) for the caller to
 * finish (also when this raises). Stops when `futures` is empty: nothing else can be finishing
 * (a leftover keeps its future in `futures`, so it never stops the loop early). */
PyObject *speedups_collect(PyObject *module, PyObject *args)
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
PyObject *speedups_release(PyObject *module, PyObject *handle_object)
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

/* A Response owning `handle` (listed among the live handles, as Response._of lists it), or NULL
 * with an exception and the handle freed. */
PyObject *owned(void *handle)
{
    PyObject *made = listed(handle);
    if (made == NULL) {
        Py_BEGIN_ALLOW_THREADS
        library.response_free(handle);
        Py_END_ALLOW_THREADS
    }
    return made;
}
