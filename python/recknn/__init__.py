"""recknn: exact item-based k-NN recommendations on the CPU or a GPU, from Python.

The library of the ``recknn`` command (librecknn) over NumPy arrays::

    import recknn
    model = recknn.ItemKNN(metric="pearson", k=20).fit(ratings_frame)   # user, item, rating columns
    items, scores = model.recommend(n=10)                                # every user with a rating
    similar, sims = model.similar_items([1, 2], n=5)
    predictions = model.predict(users, items)

Every option of the command that shapes a model is a keyword, with underscores for its dashes
(``min_support=2``, ``rank="rp3beta"``, ``device="gpu"``); the results are the command's files'
for the same ratings and options.  Raw ids of any type are kept: the model answers in them.
Errors are ``recknn.Error`` subclasses carrying the library's message.
"""
import numpy as np

from . import _recknn

__all__ = ["ItemKNN", "UserKNN", "evaluate", "load", "Error", "ArgumentError", "DataError", "FileError",
           "GPUError", "ModelFileError", "RuntimeFailure", "version"]


class Error(Exception):
    """A failure reported by librecknn (its message says what and where)."""


class ArgumentError(Error, ValueError):
    """A bad option, value or argument (the command's exit status 2)."""


class DataError(Error, ValueError):
    """Ratings the library cannot use: empty, a pair rated twice under duplicates="error" (exit 3)."""


class FileError(Error, OSError):
    """A file missing, unreadable or unwritable (exit 4)."""


class GPUError(Error, RuntimeError):
    """A CUDA failure, or no usable GPU for device="gpu" (exit 5)."""


class ModelFileError(Error, ValueError):
    """A model file truncated, corrupted or of another version (exit 3)."""


class RuntimeFailure(Error, RuntimeError):
    """Out of memory, a size beyond the library's arrays, or a bug (exit 5)."""


# rk_status values (common/rk_status.h) to classes
_recknn._set_errors({1: ArgumentError, 2: FileError, 3: DataError, 4: RuntimeFailure, 5: GPUError, 6: DataError,
                     7: DataError, 8: RuntimeFailure, 9: RuntimeFailure, 10: ModelFileError, 11: RuntimeFailure,
                     12: RuntimeFailure})

_OPTIONS = {name: (takes, fits) for name, takes, fits in _recknn.options()}


def version():
    """The version of librecknn."""
    return _recknn.version()


def set_progress(fn):
    """Follow long calls: fn(stage, done, total, unit) is called during fit, recommend, predict and
    evaluate ("similarity" in pairs or tiles, "top-N" and "baseline" in users; a few hundred times a
    stage at most, from the calling thread). An exception fn raises stops the call, which raises it.
    None: no callback. Ctrl-C stops a long call with KeyboardInterrupt, with or without one."""
    _recknn.set_progress(fn)


def _ids(values):
    """Dense indices of raw ids, numbered in ascending order of the ids (the command's order for integer
    ids): (unique ids, index of each value as int32).  Integer ids within a range of a few times their
    count are numbered through a table in two passes (20M ids: 0.1 s, against 4.2 s for np.unique's
    sort); other ids by np.unique."""
    a = np.asarray(values)
    if a.size and (a.dtype.kind == "i" or (a.dtype.kind == "u" and a.dtype.itemsize <= 4)):
        lo, hi = int(a.min()), int(a.max())
        if hi - lo < 4 * a.size + (1 << 20):
            offset = a.astype(np.int64) - lo
            present = np.zeros(hi - lo + 1, dtype=bool)
            present[offset] = True
            table = (np.cumsum(present, dtype=np.int64) - 1).astype(np.int32)
            return (np.flatnonzero(present) + lo).astype(a.dtype), table[offset]
    uniq, inverse = np.unique(a, return_inverse=True)
    return uniq, inverse.astype(np.int32, copy=False).reshape(-1)


class ItemKNN:
    """Item-based k-NN: neighbour lists of a similarity metric, recommendations summed from a ranking
    model (rp3beta by default, as the command), predictions of ratings.

    Keywords are the command's options without their dashes, underscores for dashes:
    ``metric`` (pearson), ``k`` (20), ``min_support``, ``shrinkage``, ``negative``, ``predict``,
    ``min_k``, ``implicit`` (True), ``rank``, ``rank_k``, ``alpha``, ``beta``, ``weighting``,
    ``bm25``, ``rank_values``, ``rank_shrink``, ``locality``, ``normalize``, ``duplicates``,
    ``rating_scale``, ``device`` (auto, cpu, gpu), ``gpu_memory``, ``threads``...
    """

    _by_user = False

    def __init__(self, **options):
        if "by" in options:
            raise ArgumentError("by: ItemKNN is item-based, UserKNN user-based")
        self.options = [("by", "user")] if self._by_user else []
        for key, value in options.items():
            name = key.replace("_", "-")
            if name not in _OPTIONS:
                raise ArgumentError("unknown option '%s'" % key)
            takes, fits = _OPTIONS[name]
            if not fits:
                raise ArgumentError("--%s is not an option of a model fitted in memory" % name)
            if not takes:
                if value is True:
                    self.options.append((name, None))
                elif value is not False and value is not None:
                    raise ArgumentError("--%s is a switch: True or False, not %r" % (name, value))
                continue
            if isinstance(value, bool):
                value = "yes" if value else "no"
            self.options.append((name, str(value)))
        self._model = None

    def fit(self, ratings, items=None, values=None):
        """Fit on ratings: a pandas DataFrame (columns user, item and rating, or its first three
        columns), a SciPy sparse matrix (users x items), or three sequences (ratings = users, then
        items and values; values None: every rating 1).  Returns self.

        Nothing of the ratings is copied from a CSR matrix of int32 indices and float32 data, nor from
        three arrays in CSR order: users (int32 or int64) never decreasing, items int32 from 0 to
        their largest with every index present and ascending within a user, values float32 (the
        library reads them in place; they must not change while the model lives)."""
        if items is not None:
            users, items = ratings, items
        elif hasattr(ratings, "tocsr"):
            # a SciPy matrix: its CSR arrays read in place by the library when they are int32 indices and
            # float32 data with sorted rows (indptr is converted to int64: one entry a user)
            csr = ratings.tocsr()
            if not csr.has_canonical_format:
                csr = csr.copy()
                csr.sum_duplicates()
            self._set_ids(np.arange(csr.shape[0]), np.arange(csr.shape[1]))
            self._model = _recknn.fit_csr(self.options, csr.shape[0], csr.shape[1],
                                          np.ascontiguousarray(csr.indptr, dtype=np.int64), csr.indices,
                                          csr.data)
            return self
        elif hasattr(ratings, "columns"):
            cols = list(ratings.columns)
            pick = [c for c in ("user", "item", "rating") if c in cols]
            use = pick if len(pick) == 3 else cols[:3]
            users, items, values = (ratings[c].to_numpy() for c in use)
        else:
            raise ArgumentError("fit(ratings): a DataFrame, a sparse matrix, or users, items, values")
        r = None if values is None else np.ascontiguousarray(values, dtype=np.float32)
        # arrays in CSR order (users never decreasing, int32 items 0..n-1 ascending within a user)
        # are a CSR matrix already: their items and float32 ratings are read in place
        runs = _recknn.runs(users, items) if r is None or len(r) == len(items) else None
        if runs is not None:
            indptr, user_ids, n_items = runs
            self._set_ids(user_ids, np.arange(n_items))
            self._model = _recknn.fit_csr(self.options, len(user_ids), n_items, indptr, items, r)
            return self
        user_ids, u = _ids(users)
        item_ids, i = _ids(items)
        self._set_ids(user_ids, item_ids)
        self._model = _recknn.fit(self.options, len(user_ids), len(item_ids), u, i, r)
        return self

    def _set_ids(self, user_ids, item_ids):
        # the raw ids of the indices, and the index of each raw id
        self.user_ids, self.item_ids = user_ids, item_ids
        self._user_index = {v: x for x, v in enumerate(user_ids.tolist())}
        self._item_index = {v: x for x, v in enumerate(item_ids.tolist())}

    def _fitted(self):
        if self._model is None:
            raise ArgumentError("the model is not fitted: call fit first")
        return self._model

    def _index(self, table, ids, what):
        try:
            return np.fromiter((table[v] for v in np.asarray(ids).tolist()), dtype=np.int32)
        except KeyError as e:
            raise ArgumentError("unknown %s %r" % (what, e.args[0])) from None

    def recommend(self, users=None, n=10, as_frame=False):
        """The top n items of each user (None: every user with a rating, in ascending order of their
        ids), the items they rated left out: (items, scores) arrays of shape (users, n) in raw ids,
        or a DataFrame user, rank, item, score (as_frame=True; the command's recommendations.csv).
        An empty cell is -1 (None for ids that are not numbers) with score 0."""
        m = self._fitted()
        idx = None if users is None else self._index(self._user_index, users, "user")
        items, scores, counts = m.recommend(idx, int(n))
        served = m.served_users() if users is None else idx
        raw = self._raw_items(items)
        if not as_frame:
            return raw, scores
        import pandas as pd
        rows = [(self.user_ids[served[x]], r + 1, raw[x, r], scores[x, r])
                for x in range(len(counts)) for r in range(counts[x])]
        return pd.DataFrame(rows, columns=["user", "rank", "item", "score"])

    def _raw_items(self, idx):
        # item indices to raw ids; an empty cell (-1) is -1 for numeric ids, None for others
        if self.item_ids.dtype.kind in "iuf":
            return np.where(idx >= 0, self.item_ids[np.where(idx >= 0, idx, 0)], -1)
        out = np.empty(idx.shape, dtype=object)
        out[idx >= 0] = self.item_ids[idx[idx >= 0]]
        return out

    def similar_items(self, items, n=10):
        """The neighbour lists of items (the metric's, as neighbors.csv), at most n each: (items,
        similarities) of shape (len(items), n) in raw ids; an empty cell is -1 (None for ids that are
        not numbers) with similarity 0."""
        m = self._fitted()
        nb, sims, counts = m.similar_items(self._index(self._item_index, items, "item"), int(n))
        return self._raw_items(nb), sims

    def predict(self, users, items):
        """Predicted ratings of the pairs (users[t], items[t]), as predictions.csv."""
        m = self._fitted()
        pred, _ = m.predict(self._index(self._user_index, users, "user"),
                            self._index(self._item_index, items, "item"))
        return pred

    def save(self, path):
        """The model into the command's model file (``recknn --model PATH`` answers from it), with
        its raw ids, which must be integers or strings."""
        m = self._fitted()
        m.save(str(path), [str(v) for v in self.user_ids.tolist()], [str(v) for v in self.item_ids.tolist()])

    @property
    def approx_check(self):
        """With approx="rbc" and approx_check=N: the recall of the ball cover's lists against the
        exact lists of N sampled items (sampled, evaluated, hits, exact_entries, recall_at_k,
        recall_at_k_ties, check_s: metrics.json's "approx" members); None without the check."""
        return self._fitted().approx_check()

    def neighbors(self):
        """Every item's neighbour list (every user's, for UserKNN) as a SciPy CSR matrix (items x
        items, similarities), or the arrays (indptr, indices, similarities) without SciPy."""
        indptr, indices, sims = self._fitted().neighbors()
        try:
            import scipy.sparse as sp
        except ImportError:
            return indptr, indices, sims
        n = len(indptr) - 1
        return sp.csr_matrix((sims, indices, indptr), shape=(n, n))


def _test_indices(index, ids, start):
    """Indices of test ids: the model's for the ids it knows, then new ones from start."""
    out = np.empty(len(ids), dtype=np.int32)
    new = {}
    for x, v in enumerate(ids):
        got = index.get(v)
        if got is None:
            got = new.setdefault(v, start + len(new))
        out[x] = got
    return out, start + len(new)


def evaluate(model, *data, n=10, metrics=None, baseline=False):
    """evaluate(model, test) or evaluate(model, train, test): the measures of the command's
    metrics.json ("metrics") of a model against held-out ratings test (a DataFrame or three
    sequences users, items, ratings, in the raw ids fit saw): RMSE and MAE of every test pair's
    prediction, and precision, recall, NDCG, MAP, MRR, hit rate, coverage and Gini of every user's
    top n (baseline=True: the most-popular baseline's lists, metrics.json's
    "summary_baseline_popular").  Given train too, the model is fitted on it first (model.fit;
    a tuple is users, items, ratings).  metrics: the names of the measures wanted (None: all of
    them).  Relevance is the model's "relevance" option (4 by default, every test rating with
    implicit=True).  Returns a dict."""
    if len(data) == 2:
        train, test = data
        if isinstance(train, tuple):
            model.fit(*train)
        else:
            model.fit(train)
    elif len(data) == 1:
        test = data[0]
    else:
        raise ArgumentError("evaluate(model, test) or evaluate(model, train, test), not %d data sets" % len(data))
    m = model._fitted()
    if metrics is not None:
        metrics = [metrics] if isinstance(metrics, str) else list(metrics)
        unknown = [x for x in metrics if x not in _MEASURES]
        if unknown:
            raise ArgumentError("evaluate: unknown measure '%s' (one of %s)" % (unknown[0], ", ".join(_MEASURES)))
    if hasattr(test, "columns"):
        cols = list(test.columns)
        pick = [c for c in ("user", "item", "rating") if c in cols]
        users, items, ratings = (test[c].to_numpy() for c in (pick if len(pick) == 3 else cols[:3]))
    else:
        users, items, ratings = test
    users, items = np.asarray(users).tolist(), np.asarray(items).tolist()
    u, nu = _test_indices(model._user_index, users, len(model.user_ids))
    i, ni = _test_indices(model._item_index, items, len(model.item_ids))
    r = np.ascontiguousarray(ratings, dtype=np.float32)
    got = m.evaluate(nu, ni, u, i, r, int(n), bool(baseline))
    return got if metrics is None else {x: got[x] for x in metrics}


# the measures evaluate returns, in metrics.json's names
_MEASURES = ("rmse", "mae", "fallbacks", "fallback_rate", "test_pairs", "unknown_users", "unknown_items",
             "precision", "recall", "ndcg", "map", "mrr", "hit_rate", "coverage", "gini", "n", "users",
             "relevance")


class UserKNN(ItemKNN):
    """User-based k-NN (the command's --by user): lists of similar users, predictions from the k
    most similar users who rated the item, and recommendations summed from the neighbours' items.
    The same keywords as ItemKNN (the ranking model is item mode's only)."""

    _by_user = True

    def similar_items(self, items, n=10):
        raise ArgumentError("a user-based model has user lists: similar_users")

    def similar_users(self, users, n=10):
        """The neighbour lists of users, at most n each: (users, similarities) in raw ids."""
        m = self._fitted()
        nb, sims, counts = m.similar_items(self._index(self._user_index, users, "user"), int(n))
        if self.user_ids.dtype.kind in "iuf":
            return np.where(nb >= 0, self.user_ids[np.where(nb >= 0, nb, 0)], -1), sims
        out = np.empty(nb.shape, dtype=object)
        out[nb >= 0] = self.user_ids[nb[nb >= 0]]
        return out, sims


def _ids_of(strings):
    """Ids read from a model file: integers as an int64 array when all are, else strings."""
    try:
        return np.array([int(v) for v in strings], dtype=np.int64)
    except ValueError:
        return np.array(strings, dtype=object)


def load(path, **options):
    """A model saved by ItemKNN.save or by the command (--save-model), ready to recommend, predict
    and evaluate; options: device, threads and the other options of the device."""
    model = ItemKNN(**options)
    model._model = _recknn.load(str(path), model.options)
    model._set_ids(_ids_of(model._model.ids(0)), _ids_of(model._model.ids(1)))
    return model
