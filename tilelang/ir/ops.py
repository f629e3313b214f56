"""The one enum of kernel op kinds, grouped by the shape of their typing rule."""

from __future__ import annotations

import enum


class OpKind(enum.Enum):
    """Every kernel op kind, grouped by shape of its rule."""

    # leaves and memory
    CONST = "const"
    LOAD = "load"
    STORE = "store"
    SLICE = "slice"
    # elementwise unary
    NEG = "neg"
    ABS = "abs"
    EXP = "exp"
    SQRT = "sqrt"
    RSQRT = "rsqrt"
    TANH = "tanh"
    RELU = "relu"
    CAST = "cast"
    # elementwise binary (numpy broadcasting)
    ADD = "add"
    SUB = "sub"
    MUL = "mul"
    DIV = "div"
    MAX = "max"
    MIN = "min"
    # comparisons (result i1)
    LT = "lt"
    LE = "le"
    GT = "gt"
    GE = "ge"
    EQ = "eq"
    NE = "ne"
    # select
    WHERE = "where"
    # contractions and reductions
    MATMUL = "matmul"
    SUM = "sum"
    RMAX = "reduce_max"
    RMIN = "reduce_min"


#: The float functions: exp, sqrt, 1 / sqrt and tanh (float tiles only).
ELEMENTARY = frozenset({OpKind.EXP, OpKind.SQRT, OpKind.RSQRT, OpKind.TANH})
UNARY = frozenset({OpKind.NEG, OpKind.ABS, OpKind.RELU}) | ELEMENTARY
BINARY = frozenset({OpKind.ADD, OpKind.SUB, OpKind.MUL, OpKind.DIV, OpKind.MAX, OpKind.MIN})
COMPARE = frozenset({OpKind.LT, OpKind.LE, OpKind.GT, OpKind.GE, OpKind.EQ, OpKind.NE})
REDUCE = frozenset({OpKind.SUM, OpKind.RMAX, OpKind.RMIN})
ELEMENTWISE = UNARY | BINARY | COMPARE | {OpKind.CAST, OpKind.WHERE}
KIND_BY_NAME = {k.value: k for k in OpKind}
