"""Answers read as data where reasoning-gym's scorers would run them as code.

reasoning-gym 0.1.25 evaluates text in the scorers of nine registered datasets: ``eval()``
of the model's answer (``binary_matrix``, ``spiral_matrix``, ``string_insertion``), of the
gold answer (``number_sorting``, when it is not JSON) or of the item's own problem
(``bitwise_arithmetic``), and sympy's ``parse_expr``, which ends in ``eval()``, of the answer
(``countdown``, ``puzzle24``, ``simple_integration``, ``intermediate_integration``; the
last two also of the item's integrand). While such a scorer runs, :func:`readers_for` puts
these readers in place of the names it calls (module globals of its own module only):

- :func:`read_literal` for ``eval``: ``ast.literal_eval`` of at most 200,000 characters,
  which builds lists, tuples, strings and numbers and calls nothing;
- :func:`read_integer_expression` for ``bitwise_arithmetic``'s ``eval``: integers and the
  arithmetic and bitwise operators, shifts and powers bounded;
- :func:`read_expression` for ``parse_expr``: sympy's own tokenizer and standard
  transformations turn the text into the code ``parse_expr`` would run, and instead of
  running it we walk its syntax tree: numbers, names (the scorer's own symbols, sympy's
  constants; any other name a ``Symbol``, as ``parse_expr`` makes it), arithmetic operators
  and calls of an allowlist of sympy's mathematical functions, nothing else (no attribute,
  subscript, lambda or call of anything built). Sizes are bounded (characters, nodes, digits,
  exponents, the bits of a numeric power, factorials) so ``9**9**9`` cannot hang.

The readers accept what the scorers accepted from honest answers (a list literal for
``binary_matrix``, ``4!`` or ``2^3`` for ``countdown`` as ``parse_expr`` reads them); text
they refuse raises ``ValueError``, which the scorers already treat as a wrong answer. The
audit hook of :mod:`.guard` stays the backstop for what this table misses.
"""

from __future__ import annotations

import ast
import builtins
import operator
import types
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from . import guard

__all__ = [
    "MAX_EXPRESSION_CHARS",
    "MAX_LITERAL_CHARS",
    "read_expression",
    "read_integer_expression",
    "read_literal",
    "readers_for",
]

MAX_EXPRESSION_CHARS = 2_000  # gold answers of the four sympy datasets are under 100
MAX_LITERAL_CHARS = 200_000  # the longest literal gold (number_sorting's top level): 12,751
MAX_NODES = 400
MAX_INT_DIGITS = 100
MAX_EXPONENT = 100  # |n| of x**n (a symbolic power is expanded by simplify)
MAX_POWER_BITS = 100_000  # bits of a power of two numbers
MAX_FACTORIAL = 1_000
MAX_SHIFT = 4_096  # bits of a shift in bitwise_arithmetic (its problems shift by 0-3)

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.BitXor: operator.xor,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Invert: operator.invert,
}
# What parse_expr's transformations write (Integer, Float, Rational, Symbol, factorial) and
# the mathematical functions an answer may use: each builds a sympy expression and nothing
# else (no printing, plotting, solving, parsing or code generation).
_FUNCTIONS = (
    "Integer", "Float", "Rational", "Symbol", "factorial", "factorial2",
    "sin", "cos", "tan", "cot", "sec", "csc", "asin", "acos", "atan", "acot", "asec", "acsc",
    "atan2", "sinh", "cosh", "tanh", "coth", "sech", "csch", "asinh", "acosh", "atanh", "acoth",
    "exp", "log", "ln", "sqrt", "cbrt", "root", "Abs", "erf", "erfc", "erfi", "Ei", "Si", "Ci",
    "Shi", "Chi", "li",
)  # fmt: skip
_CONSTANTS = ("pi", "E", "I", "oo", "zoo", "nan", "EulerGamma", "GoldenRatio", "Catalan")


class _Budget:
    def __init__(self, limit: int) -> None:
        self.left = limit

    def spend(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise ValueError("expression too large")


def _parse(text: str, limit: int) -> ast.Expression:
    if not isinstance(text, str):
        raise TypeError("expected text")
    if len(text) > limit:
        raise ValueError(f"longer than {limit} characters")
    with guard.reading():
        return ast.parse(text.strip(), mode="eval")


def read_literal(text: str, *_: Any, **__: Any) -> Any:
    """``eval`` for answers that are Python literals (a list of lists, a list of strings)."""
    if not isinstance(text, str):
        raise TypeError("expected text")
    if len(text) > MAX_LITERAL_CHARS:  # 500,000 numbers took 2 CPU seconds to build
        raise ValueError(f"longer than {MAX_LITERAL_CHARS} characters")
    with guard.reading():
        return ast.literal_eval(text.strip())


def _int_digits(value: int) -> int:
    return len(str(abs(value))) if abs(value) < 10**MAX_INT_DIGITS else MAX_INT_DIGITS + 1


def read_integer_expression(text: str, *_: Any, **__: Any) -> int:
    """``eval`` of integer arithmetic: literals (``0x1f``), ``+ - * // % ** << >> & | ^ ~``."""
    tree = _parse(text, 100_000)
    budget = _Budget(100_000)

    def value(node: ast.AST) -> int:
        budget.spend()
        if isinstance(node, ast.Expression):
            return value(node.body)
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return int(_UNARY[type(node.op)](value(node.operand)))
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            left, right = value(node.left), value(node.right)
            if isinstance(node.op, ast.LShift | ast.RShift | ast.Pow):
                bits = abs(right) * (max(abs(left), 1).bit_length() if isinstance(
                    node.op, ast.Pow) else 1)  # fmt: skip
                if bits > MAX_SHIFT * 64 or (isinstance(node.op, ast.LShift) and right > MAX_SHIFT):
                    raise ValueError("shift or power too large")
            return int(_BINARY[type(node.op)](left, right))
        raise ValueError(f"not integer arithmetic: {type(node).__name__}")

    return value(tree)


_NAMESPACE: dict[str, Any] | None = None


def _namespace() -> dict[str, Any]:
    """What ``parse_expr`` resolves names against (sympy's names and the builtin functions):
    a name found here is not made a Symbol, as in ``parse_expr``; only the allowlisted ones
    may then be used."""
    global _NAMESPACE
    if _NAMESPACE is None:
        import sympy

        found: dict[str, Any] = {k: getattr(sympy, k) for k in sympy.__all__ if hasattr(sympy, k)}
        for name, obj in vars(builtins).items():
            if isinstance(obj, types.BuiltinFunctionType):
                found[name] = obj
        found["max"], found["min"] = sympy.Max, sympy.Min
        _NAMESPACE = found
    return _NAMESPACE


def _check_power(base: Any, exponent: Any) -> None:
    import sympy

    e = sympy.sympify(exponent, strict=True) if isinstance(exponent, int) else exponent
    if not getattr(e, "is_Number", False):
        return  # a symbolic exponent stays unevaluated
    if e.is_infinite or abs(e) > MAX_EXPONENT:
        raise ValueError("exponent too large")
    b = sympy.sympify(base, strict=True) if isinstance(base, int) else base
    if getattr(b, "is_Rational", False):
        bits = max(abs(b.p).bit_length(), b.q.bit_length(), 1)
        if bits * abs(e) > MAX_POWER_BITS:
            raise ValueError("power too large")


_TEXT_TAKERS = frozenset({"Integer", "Float", "Rational", "Symbol"})  # parse text as numbers


def _check_call(name: str, args: list[Any]) -> None:
    for a in args:
        # Any other sympy function would sympify text, which is parse_expr again.
        if isinstance(a, str) and (name not in _TEXT_TAKERS or len(a) > MAX_INT_DIGITS + 20):
            raise ValueError(f"text argument to {name}")
    if name in ("factorial", "factorial2"):
        arg: Any = args[0] if len(args) == 1 else None
        if not (getattr(arg, "is_Integer", False) or type(arg) is int) or int(arg) > MAX_FACTORIAL:
            raise ValueError("factorial too large")


def read_expression(text: str, local_dict: Mapping[str, Any] | None = None) -> Any:
    """sympy's ``parse_expr(text, local_dict)`` with its standard transformations, built by
    walking the transformed text's syntax tree instead of evaluating it. (A scorer passing
    other arguments, say other transformations, gets a TypeError: its gold answers then fail
    the manifest's check rather than being read differently.)"""
    import sympy
    from sympy.parsing.sympy_parser import standard_transformations, stringify_expr

    if not isinstance(text, str):
        raise TypeError("expected text")
    if len(text) > MAX_EXPRESSION_CHARS:
        raise ValueError(f"longer than {MAX_EXPRESSION_CHARS} characters")
    local = dict(local_dict or {})
    namespace = _namespace()
    code = stringify_expr(text, local, namespace, standard_transformations)
    tree = _parse(code, 20 * MAX_EXPRESSION_CHARS)
    names: dict[str, Any] = {n: getattr(sympy, n) for n in _CONSTANTS}
    names.update(local)
    calls = {n: namespace[n] for n in _FUNCTIONS if n in namespace}
    calls["ln"], calls["abs"] = sympy.log, abs
    budget = _Budget(MAX_NODES)

    def value(node: ast.AST, argument: bool = False) -> Any:
        budget.spend()
        if isinstance(node, ast.Expression):
            return value(node.body)
        # Text only as an argument (Symbol('x'), Float('1.5')): 'a' * 10**9 is 1 GB.
        if isinstance(node, ast.Constant) and type(node.value) in (int, float, str):
            if type(node.value) is str and not argument:
                raise ValueError("text outside a call")
            if type(node.value) is int and _int_digits(node.value) > MAX_INT_DIGITS:
                raise ValueError("number too long")
            return node.value
        if isinstance(node, ast.Name):
            if node.id in names:
                return names[node.id]
            raise ValueError(f"name not allowed: {node.id[:40]}")
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return _UNARY[type(node.op)](value(node.operand))
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            if isinstance(node.op, ast.LShift | ast.RShift):
                raise ValueError("shifts are not arithmetic here")
            left, right = value(node.left), value(node.right)
            if isinstance(node.op, ast.Pow):
                _check_power(left, right)
            return _BINARY[type(node.op)](left, right)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in calls
            and not node.keywords
        ):
            args = [value(a, argument=True) for a in node.args]
            _check_call(node.func.id, args)
            return calls[node.func.id](*args)
        raise ValueError(f"not an expression this scorer reads: {type(node).__name__}")

    return value(tree)


class _Sympy(types.ModuleType):
    """The integration scorers' ``sympy``: the real module, but ``parse_expr`` reads."""

    def __init__(self) -> None:
        super().__init__("sympy")

    def __getattr__(self, name: str) -> Any:
        import sympy

        return read_expression if name == "parse_expr" else getattr(sympy, name)


# Module of the scorer → the globals it evaluates text through, and their readers.
_TABLE: dict[str, dict[str, Callable[[], Any]]] = {
    "reasoning_gym.algorithmic.binary_matrix": {"eval": lambda: read_literal},
    "reasoning_gym.algorithmic.spiral_matrix": {"eval": lambda: read_literal},
    "reasoning_gym.algorithmic.string_insertion": {"eval": lambda: read_literal},
    "reasoning_gym.algorithmic.number_sorting": {"eval": lambda: read_literal},
    "reasoning_gym.arithmetic.bitwise_arithmetic": {"eval": lambda: read_integer_expression},
    "reasoning_gym.games.countdown": {"parse_expr": lambda: read_expression},
    "reasoning_gym.games.puzzle24": {"parse_expr": lambda: read_expression},
    "reasoning_gym.algebra.simple_integration": {"sympy": _Sympy},
    "reasoning_gym.algebra.intermediate_integration": {"sympy": _Sympy},
}
READ_MODULES = tuple(_TABLE)
_MISSING = object()


@contextmanager
def readers_for(dataset: Any) -> Iterator[None]:
    """The readers in place in the module of ``dataset``'s class while the block runs (the
    caller holds the lock generation also takes, so no item is generated meanwhile)."""
    import sys

    module = sys.modules.get(type(dataset).__module__)
    table = _TABLE.get(type(dataset).__module__)
    if module is None or table is None:
        yield
        return
    saved = {name: module.__dict__.get(name, _MISSING) for name in table}
    try:
        for name, make in table.items():
            setattr(module, name, make())
        yield
    finally:
        for name, old in saved.items():
            if old is _MISSING:
                module.__dict__.pop(name, None)
            else:
                setattr(module, name, old)
