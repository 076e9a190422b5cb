fikit-sim-workload 1
# A workload of fikit sim; format: docs/sim-workload-format.md.
# Converted from a trace by bench/sim-workload-from-trace: 1833 launches, 1833 sequences before dropping, 1832 syncs assumed (each), split by sync.
name pocl-demo-batch
kind loop
source a trace of fikit-demo-batch --json -t 3 -w 200 on PoCL, 2 cores (bench/bursty-model.py, 2026-12-07)
seq
L 165.765 1822.701 64 256 rounds
S 1
end
seq
L 87.697 1748.518 64 256 rounds
S 1
end
seq
L 85.174 1663.22 64 256 rounds
S 1
end
seq
L 103.122 1705.263 64 256 rounds
S 1
end
seq
L 67.098 1726.315 64 256 rounds
S 1
end
seq
L 52.605 1719.635 64 256 rounds
S 1
end
seq
L 70.202 1713.655 64 256 rounds
S 1
end
seq
L 88.881 1860.445 64 256 rounds
S 1
end
seq
L 137.953 1666.657 64 256 rounds
S 1
end
seq
L 89.119 1744.992 64 256 rounds
S 1
end
seq
L 70.624 1763.03 64 256 rounds
S 1
end
seq
L 93.786 1770.641 64 256 rounds
S 1
end
seq
L 82.761 1778.652 64 256 rounds
S 1
end
seq
L 72.987 1776.359 64 256 rounds
S 1
end
seq
L 80.228 1752.944 64 256 rounds
S 1
end
seq
L 70.753 1789.899 64 256 rounds
S 1
end
seq
L 72.446 1734.978 64 256 rounds
S 1
end
seq
L 66.627 1771.252 64 256 rounds
S 1
end
seq
L 57.783 1689.86 64 256 rounds
S 1
end
seq
L 54.97 1679.765 64 256 rounds
S 1
end
seq
L 51.935 1726.295 64 256 rounds
S 1
end
seq
L 74.188 1784.151 64 256 rounds
S 1
end
seq
L 92.124 1730.842 64 256 rounds
S 1
end
seq
L 100.077 1757.131 64 256 rounds
S 1
end
seq
L 88.138 1694.006 64 256 rounds
S 1
end
seq
L 75.521 1687.587 64 256 rounds
S 1
end
seq
L 56.251 1601.418 64 256 rounds
S 1
end
seq
L 49.802 1582.811 64 256 rounds
S 1
end
seq
L 43.342 1586.016 64 256 rounds
S 1
end
seq
L 58.424 1601.658 64 256 rounds
S 1
end
seq
L 47.018 1686.165 64 256 rounds
S 1
end
seq
L 55.91 1796.641 64 256 rounds
S 1
end
seq
L 44.963 1860.336 64 256 rounds
S 1
end
seq
L 104.202 1764.655 64 256 rounds
S 1
end
seq
L 85.943 1833.416 64 256 rounds
S 1
end
seq
L 83.59 1975.799 64 256 rounds
S 1
end
seq
L 75.268 1803.622 64 256 rounds
S 1
end
seq
L 45.103 1795.771 64 256 rounds
S 1
end
seq
L 78.411 1719.626 64 256 rounds
S 1
end
seq
L 56.661 1698.805 64 256 rounds
S 1
end
seq
L 37.953 1692.075 64 256 rounds
S 1
end
seq
L 34.657 1706.627 64 256 rounds
S 1
end
seq
L 34.017 1699.416 64 256 rounds
S 1
end
seq
L 44.813 1591.373 64 256 rounds
S 1
end
seq
L 69.101 1719.415 64 256 rounds
S 1
end
seq
L 69.941 1697.652 64 256 rounds
S 1
end
seq
L 74.688 1728.228 64 256 rounds
S 1
end
seq
L 72.145 1684.133 64 256 rounds
S 1
end
seq
L 62.74 1676.331 64 256 rounds
S 1
end
seq
L 51.643 1800.907 64 256 rounds
S 1
end
seq
L 55.319 1716.953 64 256 rounds
S 1
end
seq
L 48.197 1691.574 64 256 rounds
S 1
end
seq
L 108.689 1739.736 64 256 rounds
S 1
end
seq
L 73.205 1743.36 64 256 rounds
S 1
end
seq
L 65.776 1632.345 64 256 rounds
S 1
end
seq
L 78.944 1735.419 64 256 rounds
S 1
end
seq
L 61.629 1688.59 64 256 rounds
S 1
end
seq
L 55.709 1667.178 64 256 rounds
S 1
end
seq
L 51.623 1707.127 64 256 rounds
S 1
end
seq
L 48.649 1701.64 64 256 rounds
S 1
end
seq
L 61.837 1751.234 64 256 rounds
S 1
end
seq
L 58.002 1689.121 64 256 rounds
S 1
end
seq
L 50.782 1729.522 64 256 rounds
S 1
end
seq
L 73.554 1682.242 64 256 rounds
S 1
end
seq
L 43.79 1707.009 64 256 rounds
S 1
end
seq
L 49.158 1656.372 64 256 rounds
S 1
end
seq
L 66.194 1720.588 64 256 rounds
S 1
end
seq
L 58.443 1684.714 64 256 rounds
S 1
end
seq
L 63.34 1687.939 64 256 rounds
S 1
end
seq
L 58.584 1739.706 64 256 rounds
S 1
end
seq
L 63.07 1652.576 64 256 rounds
S 1
end
seq
L 64.352 1663.342 64 256 rounds
S 1
end
seq
L 58.033 1738.925 64 256 rounds
S 1
end
seq
L 97.942 1662.162 64 256 rounds
S 1
end
seq
L 161.415 1658.275 64 256 rounds
S 1
end
seq
L 118.382 1646.105 64 256 rounds
S 1
end
seq
L 122.36 1689.491 64 256 rounds
S 1
end
seq
L 130.441 1658.854 64 256 rounds
S 1
end
seq
L 99.646 1737.062 64 256 rounds
S 1
end
seq
L 63.19 1708.331 64 256 rounds
S 1
end
seq
L 49.218 1686.747 64 256 rounds
S 1
end
seq
L 50.912 1673.577 64 256 rounds
S 1
end
seq
L 55.018 1661.85 64 256 rounds
S 1
end
seq
L 56.3 1813.598 64 256 rounds
S 1
end
seq
L 69.068 1668.55 64 256 rounds
S 1
end
seq
L 49.96 1688.59 64 256 rounds
S 1
end
seq
L 40.036 1715.632 64 256 rounds
S 1
end
seq
L 45.972 1712.797 64 256 rounds
S 1
end
seq
L 41.547 1684.385 64 256 rounds
S 1
end
seq
L 42.238 1818.534 64 256 rounds
S 1
end
seq
L 49.89 1723.503 64 256 rounds
S 1
end
seq
L 39.764 1692.937 64 256 rounds
S 1
end
seq
L 45.854 1731.274 64 256 rounds
S 1
end
seq
L 46.875 1675.981 64 256 rounds
S 1
end
seq
L 45.574 1677.093 64 256 rounds
S 1
end
seq
L 75.749 1734.959 64 256 rounds
S 1
end
seq
L 39.185 1690.042 64 256 rounds
S 1
end
seq
L 53.595 1734.328 64 256 rounds
S 1
end
seq
L 44.182 1665.778 64 256 rounds
S 1
end
seq
L 48.066 1666.517 64 256 rounds
S 1
end
seq
L 54.026 1729.002 64 256 rounds
S 1
end
seq
L 45.392 1665.255 64 256 rounds
S 1
end
seq
L 46.986 1727.95 64 256 rounds
S 1
end
seq
L 63.68 1710.252 64 256 rounds
S 1
end
seq
L 64.873 1679.086 64 256 rounds
S 1
end
seq
L 60.626 1692.055 64 256 rounds
S 1
end
seq
L 51.583 1750.613 64 256 rounds
S 1
end
seq
L 43.84 1741.751 64 256 rounds
S 1
end
seq
L 39.724 1697.303 64 256 rounds
S 1
end
seq
L 43.791 1695.992 64 256 rounds
S 1
end
seq
L 56.229 1684.754 64 256 rounds
S 1
end
seq
L 49.9 1707.65 64 256 rounds
S 1
end
seq
L 45.382 1831.154 64 256 rounds
S 1
end
seq
L 41.567 1672.676 64 256 rounds
S 1
end
seq
L 41.988 1693.569 64 256 rounds
S 1
end
seq
L 42.057 1669.613 64 256 rounds
S 1
end
seq
L 45.032 1694.86 64 256 rounds
S 1
end
seq
L 91.592 1828.559 64 256 rounds
S 1
end
seq
L 56.63 1721.038 64 256 rounds
S 1
end
seq
L 58.844 1611.925 64 256 rounds
S 1
end
seq
L 126.035 1616.962 64 256 rounds
S 1
end
seq
L 94.808 1727.286 64 256 rounds
S 1
end
seq
L 74.397 1702.36 64 256 rounds
S 1
end
seq
L 73.847 1757.924 64 256 rounds
S 1
end
seq
L 59.894 1711.002 64 256 rounds
S 1
end
seq
L 44.263 1659.256 64 256 rounds
S 1
end
seq
L 54.948 1680.668 64 256 rounds
S 1
end
seq
L 99.545 1669.842 64 256 rounds
S 1
end
seq
L 67.146 1794.838 64 256 rounds
S 1
end
seq
L 93.786 1621.851 64 256 rounds
S 1
end
seq
L 82.849 1724.463 64 256 rounds
S 1
end
seq
L 68.469 1750.02 64 256 rounds
S 1
end
seq
L 47.388 1761.757 64 256 rounds
S 1
end
seq
L 45.185 1686.997 64 256 rounds
S 1
end
seq
L 62.279 1711.234 64 256 rounds
S 1
end
seq
L 54.197 1607.537 64 256 rounds
S 1
end
seq
L 97.894 1619.758 64 256 rounds
S 1
end
seq
L 80.695 1749.753 64 256 rounds
S 1
end
seq
L 94.706 1725.356 64 256 rounds
S 1
end
seq
L 100.394 1591.195 64 256 rounds
S 1
end
seq
L 61.998 1631.385 64 256 rounds
S 1
end
seq
L 63.27 1601.27 64 256 rounds
S 1
end
seq
L 54.417 1593.107 64 256 rounds
S 1
end
seq
L 86.655 1574.81 64 256 rounds
S 1
end
seq
L 60.256 1621.269 64 256 rounds
S 1
end
seq
L 59.766 1591.626 64 256 rounds
S 1
end
seq
L 46.474 1824.564 64 256 rounds
S 1
end
seq
L 96.419 1556.324 64 256 rounds
S 1
end
seq
L 99.683 1708.19 64 256 rounds
S 1
end
seq
L 64.081 1693.648 64 256 rounds
S 1
end
seq
L 95.998 1678.477 64 256 rounds
S 1
end
seq
L 111.019 1626.246 64 256 rounds
S 1
end
seq
L 73.227 1680.499 64 256 rounds
S 1
end
seq
L 69.508 1706.187 64 256 rounds
S 1
end
seq
L 57.521 1723.774 64 256 rounds
S 1
end
seq
L 90.038 1668.7 64 256 rounds
S 1
end
seq
L 116.561 1591.535 64 256 rounds
S 1
end
seq
L 65.133 1685.716 64 256 rounds
S 1
end
seq
L 87.848 1724.323 64 256 rounds
S 1
end
seq
L 87.637 1669.862 64 256 rounds
S 1
end
seq
L 70.19 1680.818 64 256 rounds
S 1
end
seq
L 50.752 1662.641 64 256 rounds
S 1
end
seq
L 93.025 1690.893 64 256 rounds
S 1
end
seq
L 74.247 1588.32 64 256 rounds
S 1
end
seq
L 58.043 1616.071 64 256 rounds
S 1
end
seq
L 68.409 1593.768 64 256 rounds
S 1
end
seq
L 84.382 1588.911 64 256 rounds
S 1
end
seq
L 55.779 1625.486 64 256 rounds
S 1
end
seq
L 71.663 1680.959 64 256 rounds
S 1
end
seq
L 74.837 1672.616 64 256 rounds
S 1
end
seq
L 39.034 1570.163 64 256 rounds
S 1
end
seq
L 44.142 1690.242 64 256 rounds
S 1
end
seq
L 84.452 1580.138 64 256 rounds
S 1
end
seq
L 103.691 1652.826 64 256 rounds
S 1
end
seq
L 127.046 1733.056 64 256 rounds
S 1
end
seq
L 73.626 1737.542 64 256 rounds
S 1
end
seq
L 58.213 1695.299 64 256 rounds
S 1
end
seq
L 60.147 1717.312 64 256 rounds
S 1
end
seq
L 65.855 1706.968 64 256 rounds
S 1
end
seq
L 61.877 1690.292 64 256 rounds
S 1
end
seq
L 48.349 1699.636 64 256 rounds
S 1
end
seq
L 49.049 1787.257 64 256 rounds
S 1
end
seq
L 46.275 1663.883 64 256 rounds
S 1
end
seq
L 104.392 1730.212 64 256 rounds
S 1
end
seq
L 56.611 1677.943 64 256 rounds
S 1
end
seq
L 83.681 1677.553 64 256 rounds
S 1
end
seq
L 128.679 1719.666 64 256 rounds
S 1
end
seq
L 80.566 1688.88 64 256 rounds
S 1
end
seq
L 115.088 1550.674 64 256 rounds
S 1
end
seq
L 80.837 1631.064 64 256 rounds
S 1
end
seq
L 70.04 1681.459 64 256 rounds
S 1
end
seq
L 48.188 1691.174 64 256 rounds
S 1
end
seq
L 74.207 1749.691 64 256 rounds
S 1
end
seq
L 69.369 1665.966 64 256 rounds
S 1
end
seq
L 42.62 1684.944 64 256 rounds
S 1
end
seq
L 75.759 1676.662 64 256 rounds
S 1
end
seq
L 42.089 1693.056 64 256 rounds
S 1
end
seq
L 43.431 1696.852 64 256 rounds
S 1
end
seq
L 50.271 1746.066 64 256 rounds
S 1
end
seq
L 42.289 1720.097 64 256 rounds
S 1
end
