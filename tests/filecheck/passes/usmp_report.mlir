// RUN: usmp-opt %s -p 'usmp-plan-memory{algorithm=greedy_by_size},usmp-report{json="/dev/null"}' | FileCheck %s
// RUN: rm -rf %t && usmp-opt %s -p 'usmp-plan-memory{algorithm=greedy_by_size},usmp-report{json="%t/plan.json" svg="%t/plan_{pool}.svg"}' -o /dev/null
// RUN: FileCheck %s --input-file=%t/plan.json --check-prefix=JSON
// RUN: FileCheck %s --input-file=%t/plan_sram.svg --check-prefix=SVG
// RUN: FileCheck %s --input-file=%t/plan_flash.svg --check-prefix=FLASH
// RUN: usmp-opt %s -p 'usmp{algorithm=greedy_by_size report="%t/composite.json"}' -o /dev/null
// RUN: FileCheck %s --input-file=%t/composite.json --check-prefixes=JSON,COMPOSITE
// RUN: FileCheck %s --input-file=%t/composite.sram.svg --check-prefix=SVG
// After the rewrite the report reads the plan back from the pool views.
// RUN: usmp-opt %s -p 'usmp{algorithm=greedy_by_size}' | usmp-opt -p 'usmp-report{json="%t/after.json"}' -o /dev/null
// RUN: FileCheck %s --input-file=%t/after.json --check-prefix=AFTER

// The report changes no IR. (A pool's "limit" is what the plan was made
// under: unbounded for the composite, which plans; the planned size when the
// report reads a module planned earlier.)
// CHECK: name_hint = "sid_0", pool_allocation = #tir.pool_allocation<"sram", 80>

// JSON: "model": "report_main",
// COMPOSITE-NEXT: "algorithm": "greedy_by_size",
// JSON: "steps": [
// JSON-NEXT: "pad",
// JSON-NEXT: "pad",
// JSON-NEXT: "pad"
// JSON: "pools": [
// JSON: "name": "sram",
// JSON-NEXT: "kind": "workspace",
// JSON-NEXT: "size": 96,
// JSON-NEXT: "limit": {{null|96}},
// JSON-NEXT: "alignment": 16,
// JSON-NEXT: "lower_bound": 96,
// JSON-NEXT: "no_alias_bound": 96,
// JSON-NEXT: "ratio": 1.0,
// JSON-NEXT: "buffers": 3
// JSON: "name": "flash",
// JSON-NEXT: "kind": "constant",
// JSON-NEXT: "size": 4,
// JSON-NEXT: "limit": {{null|4}},
// JSON-NEXT: "alignment": 4,
// JSON-NEXT: "lower_bound": 4,
// JSON-NEXT: "no_alias_bound": null,
// JSON-NEXT: "ratio": 1.0,
// JSON-NEXT: "buffers": 1
// JSON: "total": {
// JSON-NEXT: "workspace_size": 96,
// JSON-NEXT: "workspace_lower_bound": 96,
// JSON-NEXT: "workspace_no_alias_bound": 96,
// JSON: "buffers": [
// JSON: "name": "sid_0",
// JSON-NEXT: "name_hint": "sid_0",
// JSON-NEXT: "function": "report_main",
// JSON-NEXT: "role": "allocate",
// JSON-NEXT: "pool": "sram",
// JSON-NEXT: "offset": 80,
// JSON-NEXT: "size": 16,
// JSON-NEXT: "alignment": 16,
// JSON-NEXT: "live": [
// JSON-NEXT: [
// JSON-NEXT: 0,
// JSON-NEXT: 2
// JSON: "name": "pad/padded",
// JSON-NEXT: "name_hint": "padded",
// JSON-NEXT: "function": "pad",
// JSON-NEXT: "role": "allocate",
// JSON-NEXT: "pool": "sram",
// JSON-NEXT: "offset": 0,
// JSON-NEXT: "size": 64,

// AFTER: "pools": [
// AFTER: "name": "sram",
// AFTER-NEXT: "kind": "workspace",
// AFTER-NEXT: "size": 96,
// AFTER-NEXT: "limit": 96,
// AFTER-NEXT: "alignment": 16,
// AFTER-NEXT: "lower_bound": 96,
// AFTER: "name": "flash",
// AFTER-NEXT: "kind": "constant",
// AFTER-NEXT: "size": 4,
// AFTER: "buffers": [
// AFTER: "name": "pad/padded",
// AFTER-NEXT: "name_hint": "padded",
// AFTER-NEXT: "function": "pad",
// AFTER-NEXT: "role": "allocate",
// AFTER-NEXT: "pool": "sram",
// AFTER-NEXT: "offset": 0,
// AFTER-NEXT: "size": 64,
// AFTER: "function": "report_main",
// AFTER-NEXT: "role": "constant",
// AFTER-NEXT: "pool": "flash",

// SVG: <svg xmlns="http://www.w3.org/2000/svg"
// SVG: pool sram (workspace): 96 B = 96 B
// SVG: lower bound 96 B (peak live bytes), ratio 1.000; 3 buffers over 3 steps
// SVG: <title>step 0: pad
// SVG: <title>bytes in use at each step</title>
// SVG: <title>pad/padded (allocate, pad): 64 B at offset 0
// SVG-NEXT: live steps [0, 3): pad .. pad</title>
// SVG: >pad/padded</text>{{.*}}>64 B</text>
// SVG: <title>sid_0 (allocate, report_main): 16 B at offset 80
// SVG-NEXT: live steps [0, 2): pad .. pad</title>
// SVG: pool size
// SVG: time: step of main
// SVG: address (bytes from the pool start)
// SVG: </svg>
// FLASH: pool flash (constant): 4 B = 4 B, 1 constant<
// FLASH: <title>constant_0 (report_main): 4 B at offset 0
// FLASH-NEXT: read by step(s) 0, 1, 2</title>

builtin.module attributes {tir.pools = [
    #tir.pool_info<"sram", workspace, access = {c = "rw"}>,
    #tir.pool_info<"flash", constant, alignment = 4, access = {c = "ro"}>]} {
  func.func @pad(%in: memref<16xi8>, %w: memref<4xi8>, %out: memref<16xi8>) attributes {tir.prim_func} {
    %p = tir.allocate {name_hint = "padded"} : memref<64xi8>
    func.return
  }
  func.func @report_main(%x: memref<16xi8>, %y: memref<16xi8>) attributes {tir.prim_func, tir.main} {
    %w = tir.allocate_const {name_hint = "constant_0", value = dense<[1, 2, 3, 4]> : tensor<4xi8>} : memref<4xi8>
    %0 = tir.allocate {name_hint = "sid_0"} : memref<16xi8>
    %1 = tir.allocate {name_hint = "sid_1"} : memref<16xi8>
    tir.call @pad(%x, %w, %0) : (memref<16xi8>, memref<4xi8>, memref<16xi8>) -> ()
    tir.call @pad(%0, %w, %1) : (memref<16xi8>, memref<4xi8>, memref<16xi8>) -> ()
    tir.call @pad(%1, %w, %y) : (memref<16xi8>, memref<4xi8>, memref<16xi8>) -> ()
    func.return
  }
}
