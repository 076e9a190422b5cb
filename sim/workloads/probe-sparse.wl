fikit-sim-workload 1
# A probe of the switch table in docs/DESIGN.md (the H200 measurements of 'fikit calibrate'), for docs/sim.md.
name probe-sparse
kind loop
source synthetic probe: docs/DESIGN.md switch table
seq
L 5000 20 132 256 sparse20
S 0
end
