fikit-sim-workload 1
# A probe of the switch table in docs/DESIGN.md (the H200 measurements of 'fikit calibrate'), for docs/sim.md.
name probe-fullsm
kind loop
source synthetic probe: docs/DESIGN.md switch table
seq
L 1 1000 2640 1024 fullsm
S 0
end
