# matrix.gp: one step of one run across allocators x threads x mmap: clustered bars of its peak (MiB) and median
# latency (ms), one group per allocator (and any other axis), one bar per threads/mmap combination.
# It must never read the db or run a shell: memleak-run report exports the TSVs and calls
#   gnuplot -c matrix.gp PEAK.tsv LATENCY.tsv OUT_STEM TITLE N_SERIES N_GROUPS
# and this writes OUT_STEM.png and OUT_STEM.svg. Each TSV: a header row (group, series names), one row per group.
ns = ARG5 + 0
ng = ARG6 + 0

set datafile separator "\t"
set datafile missing "?"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set grid ytics
set key outside right top vertical
set yrange [0:*]
set xtics nomirror rotate by (ng > 4 ? 20 : 0) right
if (ng <= 4) { set xtics norotate center }

do for [fmt in "png svg"] {
  if (fmt eq "png") {
    set terminal pngcairo size 1000,720 noenhanced font "sans,10"
  } else {
    set terminal svg size 1000,720 dynamic noenhanced background "white" font "sans,10"
  }
  set output ARG3 . "." . fmt
  set multiplot layout 2,1 title ARG4 font ",13"
  set title "peak (MiB): max of the step's own VmHWM over the measured iterations"
  set ylabel "MiB"
  plot for [i=2:ns + 1] ARG1 using i:xtic(1) title columnheader(i)
  set title "median latency of the step (ms)"
  set ylabel "ms"
  plot for [i=2:ns + 1] ARG2 using i:xtic(1) title columnheader(i)
  unset multiplot
  unset output
}
