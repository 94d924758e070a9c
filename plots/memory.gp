# memory.gp: one cell's memory per iteration in MiB: RSS after the iteration, the iteration's peak (HWM) and the
# live heap when measured; warmup shaded grey, a leak's judged late half shaded red with a red LEAK title.
# It must never read the db or run a shell: memleak-run report exports the TSV and calls
#   gnuplot -c memory.gp DATA.tsv OUT_STEM TITLE VERDICT FIRST_MEASURED LATE_FROM LAST HEAP
# and this writes OUT_STEM.png and OUT_STEM.svg. TSV columns: iteration, measured, rss_mib, hwm_mib, heap_mib.
datafile = ARG1
verdict = ARG4
measured_from = ARG5 + 0.0
late_from = ARG6 + 0.0
last = ARG7 + 0.0
heap = ARG8 + 0
leak = (verdict eq "leak")
lw = leak ? 3 : 1.5

set datafile separator "\t"
set datafile missing "?"
set xlabel "iteration"
set ylabel "memory (MiB)"
set grid
set key below horizontal maxcols 3 spacing 1.2
set bmargin 7
set autoscale xfix
set yrange [0:*]
set title (leak ? "LEAK - " : "") . ARG3 textcolor rgb (leak ? "#cc0000" : "#000000") font ",13"
if (measured_from > 0) {
  set object 1 rectangle from graph 0, graph 0 to first measured_from, graph 1 \
      fillcolor rgb "#e8e8e8" fillstyle solid 1.0 noborder behind
}
if (leak && late_from == late_from) {
  set object 2 rectangle from first late_from, graph 0 to first last, graph 1 \
      fillcolor rgb "#ffd8d8" fillstyle solid 1.0 noborder behind
}

array titles[3] = ["RSS after the iteration", "HWM: peak within the iteration", "live heap (heap shim)"]
array colors[3] = ["#1f77b4", "#ff7f0e", "#2ca02c"]
array dashes[3] = [1, 2, 1]
ncol = heap ? 3 : 2

do for [fmt in "png svg"] {
  if (fmt eq "png") {
    set terminal pngcairo size 1000,560 noenhanced font "sans,10"
  } else {
    set terminal svg size 1000,560 dynamic noenhanced background "white" font "sans,10"
  }
  set output ARG2 . "." . fmt
  plot for [i=1:ncol] datafile using 1:(column(i + 2)) with lines linewidth lw dashtype dashes[i] \
         linecolor rgb colors[i] title titles[i], \
       keyentry with boxes fillcolor rgb "#e8e8e8" fillstyle solid 1.0 title (measured_from > 0 ? "warmup" : ""), \
       keyentry with boxes fillcolor rgb "#ffd8d8" fillstyle solid 1.0 \
         title (leak ? "late half of the measured iterations (judged)" : "")
  unset output
}
