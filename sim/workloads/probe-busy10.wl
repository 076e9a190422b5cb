fikit-sim-workload 1
# A probe of the switch table in docs/DESIGN.md (the H200 measurements of 'fikit calibrate'), for docs/sim.md.
name probe-busy10
kind loop
source synthetic probe: docs/DESIGN.md switch table
seq
L 0 10 132 256 busy10
S 0
end
