"""Design factories users parameterise instead of writing from scratch (docs/library.md).

Each returns a traced :class:`~tilelang.ir.design.Design` for a device and a
core grid; plan it with ``tl.plan`` and run it with ``tl.simulate``.

- :func:`matmul`: single-core and whole-array GEMM (IRON's ``whole_array``); :func:`pack_streams`
  and :func:`unpack_streams` for its ``layout="streams"`` host tensors.
- :func:`matvec`: matrix-vector product, rows dealt to the cores.
- :func:`elementwise`: a named op, a function of tiles or a kernel over chunks.
- :func:`reduction`: sum or max of a vector, partials combined along a chain.
- :func:`conv2d`: k x k convolution as a sliding-window line-buffer stencil.
- :func:`softmax`: row-wise softmax.
- :func:`rms_norm`, :func:`layer_norm`: row-wise normalisations.
- :func:`attention`: softmax(Q K^T * scale) V on pipelines of three cores, keys and values streamed.
"""

from tilelang.library.attention import attention
from tilelang.library.conv2d import conv2d
from tilelang.library.elementwise import elementwise
from tilelang.library.matmul import matmul, pack_streams, unpack_streams
from tilelang.library.matvec import matvec
from tilelang.library.norm import layer_norm, rms_norm
from tilelang.library.reduction import reduction
from tilelang.library.softmax import softmax

__all__ = ["attention", "conv2d", "elementwise", "layer_norm", "matmul", "matvec", "pack_streams", "reduction", "rms_norm", "softmax",
           "unpack_streams"]
