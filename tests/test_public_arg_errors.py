"""Bad arguments to the public functions give PyTorch's exception type and text.

Every public torch.*, torch.nn.functional.*, torch.linalg.*, torch.special.* function
and Tensor method that gradcli and PyTorch both have is called with bad arguments of a
few kinds (a str, an int, None, a list of str where a tensor is wanted; an unknown
keyword; too many positional arguments), in gradcli and in PyTorch, and the exception
type and message must be the same. The cases still known to differ are listed with
their reason in tests/fixtures/public_arg_errors_known.txt and run as strict xfails
(so a fix shows up as an XPASS to take off the list). Regenerate that list with
`python tests/test_public_arg_errors.py --write-known`; `--counts` prints the tally.
"""

from __future__ import annotations

import collections
import inspect
import os
import sys
import warnings

import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as gt  # noqa: E402
from gradcli.engine.ops.arg_signatures import SIGNATURES  # noqa: E402
from gradcli.engine.ops.registry import PUBLIC  # noqa: E402

KNOWN_FILE = os.path.join(os.path.dirname(__file__), "fixtures", "public_arg_errors_known.txt")
# state, I/O and process-wide settings: not called with junk
SKIP = frozenset("""
save load manual_seed seed set_default_dtype set_printoptions set_num_threads
set_grad_enabled compile use_deterministic_algorithms set_default_tensor_type set_rng_state
initial_seed get_rng_state printoptions no_grad enable_grad inference_mode set_default_device
""".split())
NAMESPACES = (("torch.", torch, gt), ("torch.nn.functional.", torch.nn.functional,
                                      gt.nn.functional),
              ("torch.linalg.", torch.linalg, gt.linalg), ("torch.special.", torch.special,
                                                           gt.special))
FUNCTION_KINDS = {
    "str": lambda T: (("a",), {}),
    "int": lambda T: ((3,), {}),
    "none": lambda T: ((None,), {}),
    "strlist": lambda T: ((["a"],), {}),
    "keyword": lambda T: ((T.ones(2, 2),), {"foo": 1}),
    "many": lambda T: ((T.ones(2, 2),) + (1,) * 9, {}),
}
METHOD_KINDS = {
    "str": lambda T: (("a",), {}), "none": lambda T: ((None,), {}),
    "strlist": lambda T: ((["a"],), {}), "keyword": lambda T: ((), {"foo": 1}),
    "many": lambda T: ((1,) * 9, {}),
}


def _callable_pair(mod_t, mod_g, n):
    try:
        ft, fg = getattr(mod_t, n), getattr(mod_g, n)
    except AttributeError:
        return None
    if isinstance(ft, (type, property)) or isinstance(fg, type) or inspect.ismodule(ft):
        return None
    if not (callable(ft) and callable(fg)):
        return None
    return ft, fg


def functions():
    for prefix, mod_t, mod_g in NAMESPACES:
        for n in sorted(set(dir(mod_t)) & set(dir(mod_g))):
            if n.startswith("_") or n in SKIP:
                continue
            pair = _callable_pair(mod_t, mod_g, n)
            if pair:
                yield prefix + n, pair


def methods():
    for n in sorted(set(dir(torch.Tensor)) & set(dir(gt.Tensor))):
        if n.startswith("_"):
            continue
        pair = _callable_pair(torch.Tensor, gt.Tensor, n)
        if pair:
            yield "Tensor." + n, n


def outcome(fn, args, kwargs):
    """(exception type name, message) of the call, or None when it returns."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(*args, **kwargs)
    except Exception as err:  # noqa: BLE001 - any exception is the thing compared
        return type(err).__name__, str(err)
    return None


def run_case(name: str, kind: str, T):
    """The outcome of case (name, kind) with module T (torch or gradcli.torch)."""
    if name.startswith("Tensor."):
        args, kwargs = METHOD_KINDS[kind](T)
        return outcome(getattr(T.ones(2, 2), name[len("Tensor."):]), args, kwargs)
    prefix, _, short = name.rpartition(".")
    mod = T
    for part in prefix.split(".")[1:]:
        mod = getattr(mod, part)
    args, kwargs = FUNCTION_KINDS[kind](T)
    return outcome(getattr(mod, short), args, kwargs)


def all_cases():
    cases = [(name, kind) for name, _ in functions() for kind in FUNCTION_KINDS]
    cases += [(name, kind) for name, _ in methods() for kind in METHOD_KINDS]
    return cases


def read_known() -> dict:
    known = {}
    if os.path.exists(KNOWN_FILE):
        with open(KNOWN_FILE) as fh:
            for line in fh:
                if line.strip() and not line.startswith("#"):
                    key, _, reason = line.rstrip("\n").partition(" | ")
                    name, kind = key.split()
                    known[(name, kind)] = reason
    return known


KNOWN = read_known()
CASES = [pytest.param(name, kind, id=f"{name}-{kind}", marks=(
    [pytest.mark.xfail(strict=True, reason=KNOWN[(name, kind)])]
    if (name, kind) in KNOWN else [])) for name, kind in all_cases()]


@pytest.mark.parametrize("name, kind", CASES)
def test_bad_arguments_give_pytorchs_error(name, kind):
    expected = run_case(name, kind, torch)
    if expected is None:
        pytest.skip("PyTorch accepts these arguments")
    assert run_case(name, kind, gt) == expected


def test_the_examples_of_the_brief():
    with pytest.raises(TypeError) as err:
        gt.cat(3)
    assert str(err.value) == ("cat(): argument 'tensors' (position 1) must be tuple of "
                              "Tensors, not int")
    with pytest.raises(TypeError) as err:
        gt.special.erf("a")
    assert str(err.value) == "special_erf(): argument 'input' (position 1) must be Tensor, not str"


def test_the_check_leaves_good_calls_and_real_errors_alone():
    """Arguments that fit PyTorch's signatures keep gradcli's own error (a shape error
    stays a RuntimeError with its text), and good calls return as before."""
    with pytest.raises(RuntimeError, match="must match the size"):
        gt.add(gt.ones(2), gt.ones(3))
    assert gt.sum(gt.ones(2, 3), 1).tolist() == [3.0, 3.0]
    assert gt.ones(2, 2).sum(dim=0, keepdim=True).shape == (1, 2)


SEVERAL_KEYWORDS = {
    "method overloads": lambda T: T.ones(2).max("q", kk=1, zz=2),
    "function overloads": lambda T: T.clamp(T.ones(2), "q", yy=1, aa=2, mm=3),
    "incorrect keywords": lambda T: T.clamp(T.ones(2), 1, 2, yy=1, aa=2),
    "unrecognized keywords": lambda T: T.add(T.ones(2), T.ones(2), alpha=1, zz=2, bb=3),
    "Tensor.to": lambda T: T.ones(2).to(dtype=T.float64, requires_grad=True, x=None),
}


@pytest.mark.parametrize("call", list(SEVERAL_KEYWORDS.values()), ids=list(SEVERAL_KEYWORDS))
def test_several_keywords_are_listed_in_pytorchs_order(call):
    """The 'invalid combination' text names keyword arguments last to first, as PyTorch's."""
    expected = outcome(call, (torch,), {})
    assert expected is not None
    assert outcome(call, (gt,), {}) == expected


INT_LISTS = {
    "later item, one signature": lambda T: T.zeros([1, 2, "a"]),
    "later item, overloads": lambda T: T.zeros(4, 3).view([1, "a"]),
    "later item, tuple": lambda T: T.zeros(4, 3).sum((0, "a")),
    "later item, split sizes": lambda T: T.split_with_sizes(T.zeros(4, 3), [1, None]),
    "first item": lambda T: T.zeros(["a"]),
    "first item, overloads": lambda T: T.zeros(4, 3).view(["a", 1]),
}


@pytest.mark.parametrize("call", list(INT_LISTS.values()), ids=list(INT_LISTS))
def test_int_lists_are_read_as_pytorchs_parser_reads_them(call):
    """The parser checks an int list's first item; a later bad item fails its unpacking."""
    expected = outcome(call, (torch,), {})
    assert expected is not None
    assert outcome(call, (gt,), {}) == expected


def classify(name: str, kind: str) -> str | None:
    """Why case (name, kind) differs from PyTorch, or None when it matches / nothing to compare."""
    expected, actual = run_case(name, kind, torch), run_case(name, kind, gt)
    if expected is None or expected == actual:
        return None
    if actual is None:
        return "gradcli accepts these arguments (its checks run only once a call has failed)"
    if actual[0] == expected[0] and actual[1].split("\n")[0] == expected[1].split("\n")[0]:
        return "first line matches; the listing's detail lines differ"
    if name.startswith("Tensor."):
        short = name[len("Tensor."):]
        if PUBLIC.get(name) is None or getattr(gt.Tensor, short, None) is not PUBLIC.get(name):
            return ("defined on gradcli's Tensor class itself (not in the op table): left "
                    "unwrapped, so the hot path stays free")
        torch_fn = getattr(torch.Tensor, short)
    else:
        prefix, _, short = name.rpartition(".")
        mod, mine = torch, gt
        for part in prefix.split(".")[1:]:
            mod, mine = getattr(mod, part), getattr(mine, part)
        torch_fn = getattr(mod, short)
        if not hasattr(getattr(mine, short), "_without_out"):
            return ("defined by the facade module itself, not through the op table: outside "
                    "the wrapping point")
    if type(torch_fn).__name__ not in ("builtin_function_or_method", "method_descriptor"):
        return ("PyTorch's function is Python code: its errors come from its own body or the "
                "op it calls, not from the argument parser")
    if name not in SIGNATURES:
        return "its parser signatures were not recovered (bench/gen_arg_signatures.py)"
    return "a detail of PyTorch's parser or of the op is not reproduced"


def _main(argv):
    reasons = {}
    for name, kind in all_cases():
        why = classify(name, kind)
        if why:
            reasons[(name, kind)] = why
    if "--counts" in argv:
        print(len(all_cases()), "cases,", len(reasons), "differ")
        for why, n in collections.Counter(reasons.values()).most_common():
            print(f"{n:5d}  {why}")
    if "--write-known" in argv:
        with open(KNOWN_FILE, "w") as fh:
            fh.write("# name kind | why gradcli's error still differs from PyTorch's "
                     "(tests/test_public_arg_errors.py)\n")
            for (name, kind), why in sorted(reasons.items()):
                fh.write(f"{name} {kind} | {why}\n")


if __name__ == "__main__":
    _main(sys.argv[1:])
