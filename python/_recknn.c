/* _recknn.c — the Python module's native part: librecknn (api/recknn.h) over
 * NumPy arrays.  recknn/__init__.py is the interface people use (ItemKNN,
 * ids of any type, DataFrames, SciPy matrices); this file only moves arrays
 * in and out, releases the GIL while the library computes, and turns a
 * status into an exception of recknn's hierarchy. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <stdlib.h>
#include <string.h>
#include "recknn.h"

/* recknn.Error and its subclasses, by status (set by recknn/__init__.py). */
static PyObject *error_types; /* dict: int status -> class */

static PyObject *raise_status(rk_status s, const rk_error *err)
{
    PyObject *cls = NULL, *key = PyLong_FromLong((long)s);
    if (error_types != NULL && key != NULL) cls = PyDict_GetItem(error_types, key); /* borrowed */
    Py_XDECREF(key);
    if (cls == NULL) cls = PyExc_RuntimeError;
    PyErr_SetString(cls, err->msg[0] != '\0' ? err->msg : rk_strerror(s));
    return NULL;
}

static PyObject *set_errors(PyObject *self, PyObject *arg)
{
    (void)self;
    if (!PyDict_Check(arg)) return PyErr_Format(PyExc_TypeError, "a dict of status to class");
    Py_XDECREF(error_types);
    Py_INCREF(arg);
    error_types = arg;
    Py_RETURN_NONE;
}

/* ---- progress, and Ctrl-C -------------------------------------------------------
 * Every long call passes the library a progress callback (recknn_progress_fn)
 * that takes the GIL at each report, runs Python's signal handlers (Ctrl-C
 * raises KeyboardInterrupt there) and recknn.set_progress's callable; an
 * exception from either stops the call (RK_E_CANCELLED) and is raised when
 * the call returns, in place of any result. */
static PyObject *g_progress; /* recknn.set_progress's callable (NULL: none) */

typedef struct call {
#if PY_VERSION_HEX >= 0x030C0000
    PyObject *exc;
#else
    PyObject *type, *value, *tb;
#endif
    int raised;
} call;

static int on_progress(void *ud, const char *stage, double done, double total, const char *unit)
{
    call *c = ud;
    PyGILState_STATE g = PyGILState_Ensure();
    int stop = PyErr_CheckSignals() != 0;
    if (!stop && g_progress != NULL) {
        PyObject *r = PyObject_CallFunction(g_progress, "sdds", stage, done, total, unit);
        stop = r == NULL;
        Py_XDECREF(r);
    }
    if (stop && !c->raised) { /* kept for the caller's thread, which raises it */
#if PY_VERSION_HEX >= 0x030C0000
        c->exc = PyErr_GetRaisedException();
#else
        PyErr_Fetch(&c->type, &c->value, &c->tb);
#endif
        c->raised = 1;
    } else if (stop) {
        PyErr_Clear();
    }
    PyGILState_Release(g);
    return stop;
}

/* With the GIL, after the call: 1 when a report raised (the exception set again: raise it). */
static int stopped(call *c)
{
    if (!c->raised) return 0;
#if PY_VERSION_HEX >= 0x030C0000
    PyErr_SetRaisedException(c->exc);
#else
    PyErr_Restore(c->type, c->value, c->tb);
#endif
    c->raised = 0;
    return 1;
}

static PyObject *set_progress(PyObject *self, PyObject *arg)
{
    (void)self;
    if (arg != Py_None && !PyCallable_Check(arg)) return PyErr_Format(PyExc_TypeError, "a callable or None");
    Py_XDECREF(g_progress);
    g_progress = NULL;
    if (arg != Py_None) {
        Py_INCREF(arg);
        g_progress = arg;
    }
    Py_RETURN_NONE;
}

/* An int32 (or float32, float64) C-contiguous view of obj: the array itself when it is one (no copy). */
static PyArrayObject *as_array(PyObject *obj, int type)
{
    return (PyArrayObject *)PyArray_FROMANY(obj, type, 1, 2, NPY_ARRAY_IN_ARRAY);
}

/* ---- the model ---------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD recknn_model *m;
    PyObject *keep; /* the arrays a model fitted from a borrowed CSR reads in place (NULL: none) */
} Model;

static void model_dealloc(Model *self)
{
    recknn_model_free(self->m);
    Py_XDECREF(self->keep);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject ModelType;

/* m in a new Model that keeps `keep` alive (NULL: nothing); m freed when none can be made. */
static Model *wrap(recknn_model *m, PyObject *keep)
{
    Model *mo = PyObject_New(Model, &ModelType);
    if (mo == NULL) {
        recknn_model_free(m);
        return NULL;
    }
    mo->m = m;
    mo->keep = keep;
    Py_XINCREF(keep);
    return mo;
}

static int set_options(recknn_options *o, PyObject *opts);

/* fit(options, n_users, n_items, users, items, ratings or None) -> Model;
 * options: a sequence of (name, value or None). */
static PyObject *fit(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *opts, *uo, *io, *ro;
    int n_users, n_items;
    if (!PyArg_ParseTuple(args, "OiiOOO", &opts, &n_users, &n_items, &uo, &io, &ro)) return NULL;
    rk_error err;
    recknn_options *o;
    rk_status s = recknn_options_new(&o, &err);
    if (s != RK_OK) return raise_status(s, &err);
    if (set_options(o, opts) != 0) {
        recknn_options_free(o);
        return NULL;
    }
    PyArrayObject *u = as_array(uo, NPY_INT32), *i = as_array(io, NPY_INT32);
    PyArrayObject *r = ro == Py_None ? NULL : as_array(ro, NPY_FLOAT32);
    Model *mo = NULL;
    if (u != NULL && i != NULL && (ro == Py_None || r != NULL)) {
        const npy_intp n = PyArray_SIZE(u);
        if (PyArray_SIZE(i) != n || (r != NULL && PyArray_SIZE(r) != n)) {
            PyErr_SetString(PyExc_ValueError, "users, items and ratings differ in length");
        } else {
            recknn_data *d = NULL;
            recknn_model *m = NULL;
            const int32_t *up = PyArray_DATA(u), *ip = PyArray_DATA(i);
            const float *rp = r != NULL ? PyArray_DATA(r) : NULL;
            call cc = {0};
            recknn_options_set_progress(o, on_progress, &cc);
            Py_BEGIN_ALLOW_THREADS
            s = recknn_data_new(n_users, n_items, (int64_t)n, up, ip, rp, &d, &err);
            if (s == RK_OK) s = recknn_fit(o, d, &m, &err);
            recknn_data_free(d);
            Py_END_ALLOW_THREADS
            if (stopped(&cc)) recknn_model_free(m);
            else if (s != RK_OK) raise_status(s, &err);
            else mo = wrap(m, NULL);
        }
    }
    Py_XDECREF(u);
    Py_XDECREF(i);
    Py_XDECREF(r);
    recknn_options_free(o);
    return (PyObject *)mo;
}

/* The options of a sequence of (name, value or None) pairs into o. */
static int set_options(recknn_options *o, PyObject *opts)
{
    rk_error err;
    PyObject *seq = PySequence_Fast(opts, "options: a sequence of (name, value) pairs");
    rk_status s = RK_OK;
    for (Py_ssize_t x = 0; seq != NULL && s == RK_OK && x < PySequence_Fast_GET_SIZE(seq); x++) {
        const char *name, *value = NULL;
        PyObject *vo;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, x), "sO", &name, &vo)) break;
        if (vo != Py_None && (value = PyUnicode_AsUTF8(vo)) == NULL) break;
        s = recknn_options_set(o, name, value, &err);
    }
    Py_XDECREF(seq);
    if (!PyErr_Occurred() && s != RK_OK) raise_status(s, &err);
    return PyErr_Occurred() ? -1 : 0;
}

/* fit_csr(options, n_users, n_items, indptr int64, indices int32, data float32 or None) -> Model:
 * the arrays read in place (no copy) when they have those types and are contiguous; the model
 * keeps them alive. */
static PyObject *fit_csr(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *opts, *po, *xo, *vo;
    int n_users, n_items;
    if (!PyArg_ParseTuple(args, "OiiOOO", &opts, &n_users, &n_items, &po, &xo, &vo)) return NULL;
    PyArrayObject *p = as_array(po, NPY_INT64), *x = as_array(xo, NPY_INT32);
    PyArrayObject *v = vo == Py_None ? NULL : as_array(vo, NPY_FLOAT32);
    rk_error err;
    recknn_options *o = NULL;
    Model *mo = NULL;
    rk_status s = recknn_options_new(&o, &err);
    if (s != RK_OK) raise_status(s, &err);
    else if (p != NULL && x != NULL && (vo == Py_None || v != NULL) && set_options(o, opts) == 0) {
        if (PyArray_SIZE(p) != (npy_intp)n_users + 1 || (v != NULL && PyArray_SIZE(v) != PyArray_SIZE(x))) {
            PyErr_SetString(PyExc_ValueError, "indptr must hold n_users + 1 offsets, data one rating an index");
        } else {
            recknn_data *d = NULL;
            recknn_model *m = NULL;
            const int64_t *pp = PyArray_DATA(p);
            const int32_t *xp = PyArray_DATA(x);
            const float *vp = v != NULL ? PyArray_DATA(v) : NULL;
            if (pp[n_users] > PyArray_SIZE(x)) {
                PyErr_SetString(PyExc_ValueError, "indptr's last offset is beyond the indices");
            } else {
                call cc = {0};
                recknn_options_set_progress(o, on_progress, &cc);
                Py_BEGIN_ALLOW_THREADS
                s = recknn_data_from_csr(n_users, n_items, pp, xp, vp, 1, &d, &err);
                if (s == RK_OK) s = recknn_fit(o, d, &m, &err);
                recknn_data_free(d);
                Py_END_ALLOW_THREADS
                const int raised = stopped(&cc); /* a report's exception, set again */
                if (raised) recknn_model_free(m);
                PyObject *keep = !raised && s == RK_OK
                                     ? Py_BuildValue("(OOO)", p, x, v != NULL ? (PyObject *)v : Py_None)
                                     : NULL;
                if (raised) {
                } else if (s != RK_OK) raise_status(s, &err);
                else if (keep == NULL) recknn_model_free(m);
                else mo = wrap(m, keep);
                Py_XDECREF(keep);
            }
        }
    }
    Py_XDECREF(p);
    Py_XDECREF(x);
    Py_XDECREF(v);
    recknn_options_free(o);
    return (PyObject *)mo;
}

/* recommend(users or None, n) -> (items[u, n] int32, scores[u, n] float64, counts[u] int32) */
static PyObject *model_recommend(Model *self, PyObject *args)
{
    PyObject *uo;
    int n;
    if (!PyArg_ParseTuple(args, "Oi", &uo, &n)) return NULL;
    if (n < 1) return PyErr_Format(PyExc_ValueError, "n must be at least 1, got %d", n);
    PyArrayObject *u = uo == Py_None ? NULL : as_array(uo, NPY_INT32);
    if (uo != Py_None && u == NULL) return NULL;
    const npy_intp served = u != NULL ? PyArray_SIZE(u) : (npy_intp)recknn_model_served(self->m);
    npy_intp dims[2] = {served, n};
    PyObject *items = PyArray_SimpleNew(2, dims, NPY_INT32), *scores = PyArray_SimpleNew(2, dims, NPY_FLOAT64);
    PyObject *counts = PyArray_SimpleNew(1, dims, NPY_INT32);
    PyObject *out = NULL;
    if (items != NULL && scores != NULL && counts != NULL) {
        rk_error err;
        rk_status s;
        const int32_t *up = u != NULL ? PyArray_DATA(u) : NULL;
        int32_t *ip = PyArray_DATA((PyArrayObject *)items), *cp = PyArray_DATA((PyArrayObject *)counts);
        double *sp = PyArray_DATA((PyArrayObject *)scores);
        call cc = {0};
        recknn_model_set_progress(self->m, on_progress, &cc);
        Py_BEGIN_ALLOW_THREADS
        s = recknn_recommend(self->m, up, (int64_t)served, n, ip, sp, cp, &err);
        Py_END_ALLOW_THREADS
        recknn_model_set_progress(self->m, NULL, NULL);
        if (stopped(&cc)) {
        } else if (s != RK_OK) raise_status(s, &err);
        else out = Py_BuildValue("(OOO)", items, scores, counts);
    }
    Py_XDECREF(items);
    Py_XDECREF(scores);
    Py_XDECREF(counts);
    Py_XDECREF(u);
    return out;
}

/* similar_items(items, n) -> (neighbours[x, n] int32, sims[x, n] float32, counts[x] int32) */
static PyObject *model_similar(Model *self, PyObject *args)
{
    PyObject *io;
    int n;
    if (!PyArg_ParseTuple(args, "Oi", &io, &n)) return NULL;
    PyArrayObject *i = as_array(io, NPY_INT32);
    if (i == NULL) return NULL;
    npy_intp dims[2] = {PyArray_SIZE(i), n > 0 ? n : 0};
    PyObject *nb = PyArray_SimpleNew(2, dims, NPY_INT32), *sm = PyArray_SimpleNew(2, dims, NPY_FLOAT32);
    PyObject *ct = PyArray_SimpleNew(1, dims, NPY_INT32), *out = NULL;
    if (nb != NULL && sm != NULL && ct != NULL) {
        rk_error err;
        const rk_status s = recknn_similar_items(self->m, PyArray_DATA(i), (int64_t)dims[0], n,
                                                 PyArray_DATA((PyArrayObject *)nb), PyArray_DATA((PyArrayObject *)sm),
                                                 PyArray_DATA((PyArrayObject *)ct), &err);
        if (s != RK_OK) raise_status(s, &err);
        else out = Py_BuildValue("(OOO)", nb, sm, ct);
    }
    Py_XDECREF(nb);
    Py_XDECREF(sm);
    Py_XDECREF(ct);
    Py_DECREF(i);
    return out;
}

/* predict(users, items) -> (predictions float64, used int32) */
static PyObject *model_predict(Model *self, PyObject *args)
{
    PyObject *uo, *io, *out = NULL;
    if (!PyArg_ParseTuple(args, "OO", &uo, &io)) return NULL;
    PyArrayObject *u = as_array(uo, NPY_INT32), *i = as_array(io, NPY_INT32);
    if (u != NULL && i != NULL && PyArray_SIZE(u) != PyArray_SIZE(i))
        PyErr_SetString(PyExc_ValueError, "users and items differ in length");
    if (u != NULL && i != NULL && !PyErr_Occurred()) {
        npy_intp dims[1] = {PyArray_SIZE(u)};
        PyObject *p = PyArray_SimpleNew(1, dims, NPY_FLOAT64), *used = PyArray_SimpleNew(1, dims, NPY_INT32);
        if (p != NULL && used != NULL) {
            rk_error err;
            rk_status s;
            const int32_t *up = PyArray_DATA(u), *ip = PyArray_DATA(i);
            double *pp = PyArray_DATA((PyArrayObject *)p);
            int32_t *np_ = PyArray_DATA((PyArrayObject *)used);
            call cc = {0};
            recknn_model_set_progress(self->m, on_progress, &cc);
            Py_BEGIN_ALLOW_THREADS
            s = recknn_predict(self->m, up, ip, (int64_t)dims[0], pp, np_, &err);
            Py_END_ALLOW_THREADS
            recknn_model_set_progress(self->m, NULL, NULL);
            if (stopped(&cc)) {
            } else if (s != RK_OK) raise_status(s, &err);
            else out = Py_BuildValue("(OO)", p, used);
        }
        Py_XDECREF(p);
        Py_XDECREF(used);
    }
    Py_XDECREF(u);
    Py_XDECREF(i);
    return out;
}

/* neighbors() -> (indptr int64, indices int32, sims float32) */
static PyObject *model_neighbors(Model *self, PyObject *noargs)
{
    (void)noargs;
    int64_t entries;
    recknn_model_shape(self->m, NULL, NULL, NULL, &entries);
    npy_intp dp[1] = {(npy_intp)recknn_model_list_rows(self->m) + 1}, de[1] = {(npy_intp)entries};
    PyObject *p = PyArray_SimpleNew(1, dp, NPY_INT64), *x = PyArray_SimpleNew(1, de, NPY_INT32);
    PyObject *s = PyArray_SimpleNew(1, de, NPY_FLOAT32), *out = NULL;
    if (p != NULL && x != NULL && s != NULL) {
        recknn_neighbors_csr(self->m, PyArray_DATA((PyArrayObject *)p), PyArray_DATA((PyArrayObject *)x),
                             PyArray_DATA((PyArrayObject *)s));
        out = Py_BuildValue("(OOO)", p, x, s);
    }
    Py_XDECREF(p);
    Py_XDECREF(x);
    Py_XDECREF(s);
    return out;
}

/* evaluate(n_users, n_items, users, items, ratings, n, most_popular) -> dict of metrics.json's names */
static PyObject *model_evaluate(Model *self, PyObject *args)
{
    PyObject *uo, *io, *ro, *out = NULL;
    int nu, ni, n, popular;
    if (!PyArg_ParseTuple(args, "iiOOOip", &nu, &ni, &uo, &io, &ro, &n, &popular)) return NULL;
    PyArrayObject *u = as_array(uo, NPY_INT32), *i = as_array(io, NPY_INT32), *r = as_array(ro, NPY_FLOAT32);
    if (u != NULL && i != NULL && r != NULL &&
        (PyArray_SIZE(i) != PyArray_SIZE(u) || PyArray_SIZE(r) != PyArray_SIZE(u)))
        PyErr_SetString(PyExc_ValueError, "users, items and ratings differ in length");
    if (u != NULL && i != NULL && r != NULL && !PyErr_Occurred()) {
        rk_error err;
        rk_status s;
        recknn_metrics mt;
        recknn_data *d = NULL;
        const int32_t *up = PyArray_DATA(u), *ip = PyArray_DATA(i);
        const float *rp = PyArray_DATA(r);
        const int64_t len = (int64_t)PyArray_SIZE(u);
        call cc = {0};
        recknn_model_set_progress(self->m, on_progress, &cc);
        Py_BEGIN_ALLOW_THREADS
        s = recknn_data_new(nu, ni, len, up, ip, rp, &d, &err);
        if (s == RK_OK) s = recknn_evaluate(self->m, d, n, popular, &mt, &err);
        recknn_data_free(d);
        Py_END_ALLOW_THREADS
        recknn_model_set_progress(self->m, NULL, NULL);
        if (stopped(&cc)) {
        } else if (s != RK_OK) raise_status(s, &err);
        else
            out = Py_BuildValue("{s:d,s:d,s:L,s:d,s:L,s:L,s:L,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:i,s:L,s:d}",
                                "rmse", mt.rmse, "mae", mt.mae, "fallbacks", (long long)mt.fallbacks,
                                "fallback_rate", mt.test_pairs > 0 ? (double)mt.fallbacks / (double)mt.test_pairs : 0.0,
                                "test_pairs", (long long)mt.test_pairs, "unknown_users", (long long)mt.unknown_users,
                                "unknown_items", (long long)mt.unknown_items, "precision", mt.precision, "recall",
                                mt.recall, "ndcg", mt.ndcg, "map", mt.map, "mrr", mt.mrr, "hit_rate", mt.hit_rate,
                                "coverage", mt.coverage, "gini", mt.gini, "n", mt.n, "users", (long long)mt.users,
                                "relevance", mt.relevance);
    }
    Py_XDECREF(u);
    Py_XDECREF(i);
    Py_XDECREF(r);
    return out;
}

/* The strings of a sequence (NULL for None), as a C array valid while seq lives. */
static const char **strings_of(PyObject *seq, Py_ssize_t *n)
{
    *n = PySequence_Fast_GET_SIZE(seq);
    const char **v = PyMem_Calloc((size_t)(*n > 0 ? *n : 1), sizeof *v);
    if (v == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t x = 0; x < *n; x++)
        if ((v[x] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(seq, x))) == NULL) {
            PyMem_Free(v);
            return NULL;
        }
    return v;
}

/* save(path, user_ids or None, item_ids or None): ids as str sequences in index order */
static PyObject *model_save(Model *self, PyObject *args)
{
    const char *path;
    PyObject *uo, *io, *us = NULL, *is = NULL, *out = NULL;
    const char **uv = NULL, **iv = NULL;
    Py_ssize_t nu = 0, ni = 0;
    if (!PyArg_ParseTuple(args, "sOO", &path, &uo, &io)) return NULL;
    if (uo != Py_None && ((us = PySequence_Fast(uo, "user ids")) == NULL || (uv = strings_of(us, &nu)) == NULL))
        goto done;
    if (io != Py_None && ((is = PySequence_Fast(io, "item ids")) == NULL || (iv = strings_of(is, &ni)) == NULL))
        goto done;
    int32_t n_users, n_items;
    recknn_model_shape(self->m, &n_users, &n_items, NULL, NULL);
    if ((uv != NULL && nu != n_users) || (iv != NULL && ni != n_items)) {
        PyErr_Format(PyExc_ValueError, "%zd user ids and %zd item ids for a model of %d users and %d items", nu, ni,
                     n_users, n_items);
        goto done;
    }
    rk_error err;
    const rk_status s = recknn_model_save(self->m, path, uv, iv, &err);
    if (s != RK_OK) raise_status(s, &err);
    else {
        Py_INCREF(Py_None);
        out = Py_None;
    }
done:
    PyMem_Free(uv);
    PyMem_Free(iv);
    Py_XDECREF(us);
    Py_XDECREF(is);
    return out;
}

/* ids(which) -> list of str (which 0 users, 1 items), or None when the model has none */
static PyObject *model_ids(Model *self, PyObject *args)
{
    int which;
    if (!PyArg_ParseTuple(args, "i", &which)) return NULL;
    int32_t nu, ni;
    recknn_model_shape(self->m, &nu, &ni, NULL, NULL);
    const int32_t n = which == 0 ? nu : ni;
    char buf[300];
    if (n > 0 && recknn_model_id(self->m, which, 0, buf, sizeof buf) < 0) Py_RETURN_NONE;
    PyObject *l = PyList_New(n);
    for (int32_t i = 0; l != NULL && i < n; i++) {
        const int len = recknn_model_id(self->m, which, i, buf, sizeof buf);
        PyObject *v = PyUnicode_DecodeUTF8(buf, len > 0 ? len : 0, "surrogateescape");
        if (v == NULL) Py_CLEAR(l);
        else PyList_SET_ITEM(l, i, v);
    }
    return l;
}

/* served_users() -> int32 array: the users recommend(None) serves, ascending */
static PyObject *model_served_users(Model *self, PyObject *noargs)
{
    (void)noargs;
    npy_intp dims[1] = {(npy_intp)recknn_model_served(self->m)};
    PyObject *a = PyArray_SimpleNew(1, dims, NPY_INT32);
    if (a != NULL) recknn_model_served_users(self->m, PyArray_DATA((PyArrayObject *)a));
    return a;
}

/* shape() -> (n_users, n_items, k, entries, served) */
static PyObject *model_shape(Model *self, PyObject *noargs)
{
    (void)noargs;
    int32_t nu, ni, k;
    int64_t entries;
    recknn_model_shape(self->m, &nu, &ni, &k, &entries);
    return Py_BuildValue("(iiiLL)", nu, ni, k, (long long)entries, (long long)recknn_model_served(self->m));
}

/* approx_check() -> dict of the recall check (option approx-check), or None without one */
static PyObject *model_approx_check(Model *self, PyObject *noargs)
{
    (void)noargs;
    recknn_approx_check c;
    rk_error err;
    if (recknn_model_approx_check(self->m, &c, &err) != RK_OK) Py_RETURN_NONE;
    return Py_BuildValue("{s:L,s:L,s:L,s:L,s:d,s:d,s:d}", "sampled", (long long)c.sampled, "evaluated",
                         (long long)c.evaluated, "hits", (long long)c.hits, "exact_entries",
                         (long long)c.exact_entries, "recall_at_k", c.recall_at_k, "recall_at_k_ties",
                         c.recall_at_k_ties, "check_s", c.check_s);
}

static PyMethodDef model_methods[] = {
    {"approx_check", (PyCFunction)model_approx_check, METH_NOARGS, "approx_check() -> dict or None"},
    {"recommend", (PyCFunction)model_recommend, METH_VARARGS, "recommend(users or None, n)"},
    {"similar_items", (PyCFunction)model_similar, METH_VARARGS, "similar_items(items, n)"},
    {"predict", (PyCFunction)model_predict, METH_VARARGS, "predict(users, items)"},
    {"neighbors", (PyCFunction)model_neighbors, METH_NOARGS, "neighbors() -> (indptr, indices, sims)"},
    {"served_users", (PyCFunction)model_served_users, METH_NOARGS, "the users recommend(None) serves"},
    {"save", (PyCFunction)model_save, METH_VARARGS, "save(path, user_ids or None, item_ids or None)"},
    {"ids", (PyCFunction)model_ids, METH_VARARGS, "ids(0 users or 1 items) -> list of str, or None"},
    {"evaluate", (PyCFunction)model_evaluate, METH_VARARGS,
     "evaluate(n_users, n_items, users, items, ratings, n, most_popular) -> dict"},
    {"shape", (PyCFunction)model_shape, METH_NOARGS, "shape() -> (n_users, n_items, k, entries, served)"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ModelType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "recknn._recknn.Model",
    .tp_basicsize = sizeof(Model),
    .tp_dealloc = (destructor)model_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "a fitted librecknn model (recknn.ItemKNN holds one)",
    .tp_methods = model_methods,
};

/* load(path, options) -> Model; options as fit's (device, threads...) */
static PyObject *load(PyObject *self, PyObject *args)
{
    (void)self;
    const char *path;
    PyObject *opts;
    if (!PyArg_ParseTuple(args, "sO", &path, &opts)) return NULL;
    rk_error err;
    recknn_options *o;
    rk_status s = recknn_options_new(&o, &err);
    if (s != RK_OK) return raise_status(s, &err);
    Model *mo = NULL;
    if (set_options(o, opts) == 0) {
        recknn_model *m = NULL;
        Py_BEGIN_ALLOW_THREADS
        s = recknn_model_load(path, o, &m, &err);
        Py_END_ALLOW_THREADS
        if (s != RK_OK) raise_status(s, &err);
        else mo = wrap(m, NULL);
    }
    recknn_options_free(o);
    return (PyObject *)mo;
}

/* runs(users, items) -> (indptr int64, user ids int64, n_items) or None: ratings given as
 * three arrays in CSR order -- users (int32 or int64) never decreasing, items (int32)
 * strictly ascending within each user's run and every index 0 .. max present -- are a CSR
 * matrix already: indptr (one entry a user) is all that is made, and the caller passes
 * items and ratings to fit_csr to be read in place.  None for any other input (the caller
 * then numbers the ids itself, with copies).  One pass; the GIL released. */
static PyObject *runs(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *uo, *io;
    if (!PyArg_ParseTuple(args, "OO", &uo, &io)) return NULL;
    if (!PyArray_Check(uo) || !PyArray_Check(io)) Py_RETURN_NONE;
    PyArrayObject *ua = (PyArrayObject *)uo, *ia = (PyArrayObject *)io;
    const int ut = PyArray_TYPE(ua);
    if ((ut != NPY_INT32 && ut != NPY_INT64) || PyArray_TYPE(ia) != NPY_INT32 || PyArray_NDIM(ua) != 1 ||
        PyArray_NDIM(ia) != 1 || !PyArray_ISCARRAY_RO(ua) || !PyArray_ISCARRAY_RO(ia) || !PyArray_ISNOTSWAPPED(ua) ||
        !PyArray_ISNOTSWAPPED(ia) || PyArray_SIZE(ua) != PyArray_SIZE(ia) || PyArray_SIZE(ua) == 0)
        Py_RETURN_NONE;
    const npy_intp n = PyArray_SIZE(ua);
    const int32_t *it = PyArray_DATA(ia);
    const int32_t *u32 = ut == NPY_INT32 ? PyArray_DATA(ua) : NULL;
    const int64_t *u64 = ut == NPY_INT64 ? PyArray_DATA(ua) : NULL;
#define RUNS_USER(t) (u32 != NULL ? (int64_t)u32[t] : u64[t])
    int ok = 1;
    npy_intp n_runs = 0;
    int32_t top = -1;
    Py_BEGIN_ALLOW_THREADS
    for (npy_intp t = 0; t < n && ok; t++) {
        const int new_run = t == 0 || RUNS_USER(t) != RUNS_USER(t - 1);
        if (t > 0 && (RUNS_USER(t) < RUNS_USER(t - 1) || (!new_run && it[t] <= it[t - 1]))) ok = 0;
        if (it[t] < 0) ok = 0;
        n_runs += new_run;
        if (it[t] > top) top = it[t];
    }
    Py_END_ALLOW_THREADS
    if (!ok || n_runs > INT32_MAX) Py_RETURN_NONE;
    unsigned char *seen = calloc((size_t)top + 1, 1);
    if (seen == NULL) return PyErr_NoMemory();
    npy_intp distinct = 0;
    Py_BEGIN_ALLOW_THREADS
    for (npy_intp t = 0; t < n; t++) {
        distinct += !seen[it[t]];
        seen[it[t]] = 1;
    }
    Py_END_ALLOW_THREADS
    free(seen);
    if (distinct != (npy_intp)top + 1) Py_RETURN_NONE;
    npy_intp dp[1] = {n_runs + 1}, du[1] = {n_runs};
    PyObject *p = PyArray_SimpleNew(1, dp, NPY_INT64), *ids = PyArray_SimpleNew(1, du, NPY_INT64);
    if (p == NULL || ids == NULL) {
        Py_XDECREF(p);
        Py_XDECREF(ids);
        return NULL;
    }
    int64_t *pp = PyArray_DATA((PyArrayObject *)p), *ip = PyArray_DATA((PyArrayObject *)ids);
    Py_BEGIN_ALLOW_THREADS
    npy_intp r = 0;
    for (npy_intp t = 0; t < n; t++)
        if (t == 0 || RUNS_USER(t) != RUNS_USER(t - 1)) {
            pp[r] = (int64_t)t;
            ip[r++] = RUNS_USER(t);
        }
    pp[r] = (int64_t)n;
    Py_END_ALLOW_THREADS
#undef RUNS_USER
    return Py_BuildValue("(NNi)", p, ids, (int)top + 1);
}

/* options() -> [(name, takes_value, fits)] */
static PyObject *options(PyObject *self, PyObject *noargs)
{
    (void)self;
    (void)noargs;
    PyObject *l = PyList_New(0);
    for (size_t x = 0; l != NULL && recknn_option_name(x) != NULL; x++) {
        const char *n = recknn_option_name(x);
        PyObject *t = Py_BuildValue("(sii)", n, recknn_option_takes_value(n), recknn_option_fits(n));
        if (t == NULL || PyList_Append(l, t) != 0) Py_CLEAR(l);
        Py_XDECREF(t);
    }
    return l;
}

static PyObject *version(PyObject *self, PyObject *noargs)
{
    (void)self;
    (void)noargs;
    return PyUnicode_FromString(recknn_version());
}

static PyMethodDef methods[] = {
    {"fit", fit, METH_VARARGS, "fit(options, n_users, n_items, users, items, ratings or None) -> Model"},
    {"fit_csr", fit_csr, METH_VARARGS, "fit_csr(options, n_users, n_items, indptr, indices, data or None) -> Model"},
    {"runs", runs, METH_VARARGS, "runs(users, items) -> (indptr, user ids, n_items) of arrays in CSR order, or None"},
    {"options", options, METH_NOARGS, "options() -> [(name, takes_value, fits)]"},
    {"load", load, METH_VARARGS, "load(path, options) -> Model"},
    {"version", version, METH_NOARGS, "the library's version"},
    {"_set_errors", set_errors, METH_O, "the exception classes by status"},
    {"set_progress", set_progress, METH_O, "set_progress(callable(stage, done, total, unit) or None)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_recknn", "librecknn over NumPy arrays", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__recknn(void)
{
    import_array();
    if (PyType_Ready(&ModelType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    Py_INCREF(&ModelType);
    if (PyModule_AddObject(m, "Model", (PyObject *)&ModelType) < 0) {
        Py_DECREF(&ModelType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
