module {
  aie.device(npu1_1col) {
    %shim = aie.tile(0, 0)
    %core = aie.tile(0, 2)
    aie.objectfifo @x(%shim, {%core}, 2 : i32) : !aie.objectfifo<memref<16xi32>>
    aie.objectfifo @y(%core, {%shim}, 2 : i32) : !aie.objectfifo<memref<16xi32>>
    func.func private @inc(memref<16xi32>, memref<16xi32>, i32) attributes {link_with = "inc.o"}
    aie.core(%core) {
      %lo = arith.constant 0 : index
      %hi = arith.constant 4294967295 : index
      %one = arith.constant 1 : index
      %n = arith.constant 16 : i32
      scf.for %i = %lo to %hi step %one {
        %sa = aie.objectfifo.acquire @x(Consume, 1) : !aie.objectfifosubview<memref<16xi32>>
        %a = aie.objectfifo.subview.access %sa[0] : !aie.objectfifosubview<memref<16xi32>> -> memref<16xi32>
        %sb = aie.objectfifo.acquire @y(Produce, 1) : !aie.objectfifosubview<memref<16xi32>>
        %b = aie.objectfifo.subview.access %sb[0] : !aie.objectfifosubview<memref<16xi32>> -> memref<16xi32>
        func.call @inc(%a, %b, %n) : (memref<16xi32>, memref<16xi32>, i32) -> ()
        aie.objectfifo.release @x(Consume, 1)
        aie.objectfifo.release @y(Produce, 1)
      }
      aie.end
    }
    aie.runtime_sequence(%in : memref<128xi32>, %unused : memref<8xi32>, %out : memref<128xi32>) {
      %z = arith.constant 0 : i64
      %u = arith.constant 1 : i64
      %len = arith.constant 128 : i64
      aiex.npu.dma_memcpy_nd(%out[%z, %z, %z, %z][%u, %u, %u, %len][%z, %z, %z, %u]) {metadata = @y, id = 1 : i64} : memref<128xi32>
      aiex.npu.dma_memcpy_nd(%in[%z, %z, %z, %z][%u, %u, %u, %len][%z, %z, %z, %u]) {metadata = @x, id = 0 : i64, issue_token = true} : memref<128xi32>
      aiex.npu.dma_wait {symbol = @y}
    }
  }
}
