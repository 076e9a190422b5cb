fikit-sim-workload 1
# A probe of the switch table in docs/DESIGN.md (the H200 measurements of 'fikit calibrate'), for docs/sim.md.
name probe-hp
kind service
source synthetic probe: docs/DESIGN.md switch table
seq
L 1 20 132 256 probe_hp
S 0
end
