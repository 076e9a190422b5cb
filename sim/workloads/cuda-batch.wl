fikit-sim-workload 1
# A workload of fikit sim; format: docs/sim-workload-format.md.
# Written by bench/sim-workloads-synth: synthetic, from recorded figures, not a trace.
name cuda-batch
kind loop
source synthetic: demo/cuda/batch.cu as bench/evaluate runs it (-w 20000): a 4096x256 kernel, 4 MB copied out and checked an iteration; 454 kernels/s alone (H200 2026-12-04, median of 12 alone runs)
seq
L 644.999 1542.356 4096 256 _Z5layerILi15EEvPjjj
S 2
end
seq
L 677.029 1494.264 4096 256 _Z5layerILi15EEvPjjj
S 2
end
seq
L 639.591 1518.48 4096 256 _Z5layerILi15EEvPjjj
S 2
end
seq
L 626.623 1530.271 4096 256 _Z5layerILi15EEvPjjj
S 2
end
seq
L 611.928 1521.342 4096 256 _Z5layerILi15EEvPjjj
S 2
end
seq
L 722.622 1532.306 4096 256 _Z5layerILi15EEvPjjj
S 2
end
seq
L 697.235 1546.607 4096 256 _Z5layerILi15EEvPjjj
S 2
end
seq
L 734.584 1529.521 4096 256 _Z5layerILi15EEvPjjj
S 2
end
