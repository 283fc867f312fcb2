// RUN: usmp-opt %s --split-input-file --verify-diagnostics

// expected-error@+1 {{virtual_device: device id must be >= 0}}
builtin.module attributes {test.a = #device.virtual_device<"cpu", -1>} {
}

// -----

// expected-error@+1 {{virtual_device: device id 2147483648 is more than 2147483647 (DLDevice's int32_t)}}
builtin.module attributes {test.a = #device.virtual_device<"cpu", 2147483648>} {
}

// -----

// expected-error@+1 {{unknown virtual_device key 'memory' (expected target or scope)}}
builtin.module attributes {test.a = #device.virtual_device<"cpu", 0, memory = "x">} {
}
