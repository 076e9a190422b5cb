fikit-sim-workload 1
# A workload of fikit sim; format: docs/sim-workload-format.md.
# Written by bench/sim-workloads-synth: synthetic, from recorded figures, not a trace.
name long-kernel-loop
kind loop
source synthetic: issue 22's lower job whose kernels (9 to 170 ms, every SM) are longer than every gap of the service beside it
seq
L 50 8882.858 2112 256 long_k0
S 5
end
seq
L 50 38664.539 2112 256 long_k1
S 5
end
seq
L 50 171814.996 2112 256 long_k2
S 5
end
seq
L 50 8882.209 2112 256 long_k0
S 5
end
seq
L 50 39701.413 2112 256 long_k1
S 5
end
seq
L 50 174192.626 2112 256 long_k2
S 5
end
