# trend.gp: one config's metric across runs, commits on the x axis: the value per run, the baseline band (rolling
# median of the previous 5 runs +/- 5%), regressions flagged by memleak-run compare, change points as vertical lines.
# It must never read the db or run a shell: memleak-run report exports the TSV and calls
#   gnuplot -c trend.gp DATA.tsv OUT_STEM TITLE YLABEL N_RUNS YMIN YMAX "N_CHANGE_POINTS N_FLAGGED N_BAND"
# and this writes OUT_STEM.png and OUT_STEM.svg. TSV block 0: x, commit, value, band_lo, band_hi, baseline,
# regression (the value when flagged, else ?); block 1: x, commit of each change point.
datafile = ARG1
n = ARG5 + 0
ymin = ARG6 + 0.0
ymax = ARG7 + 0.0
ncp = word(ARG8, 1) + 0
nflag = word(ARG8, 2) + 0
nband = word(ARG8, 3) + 0
every_nth = n > 24 ? int(n / 24) + 1 : 1
label_at(x, s) = (int(x) % every_nth == 0 || int(x) == n - 1) ? s : ""

set datafile separator "\t"
set datafile missing "?"
set title ARG3 font ",13"
set xlabel "run (commit)"
set ylabel ARG4
set grid ytics
set key below horizontal maxrows 2 spacing 1.2
set bmargin 9
set xrange [-0.5:n - 0.5]
set yrange [ymin:ymax]
set xtics rotate by 45 right nomirror

# Elements without data are left out (gnuplot warns about an empty one). The command names the file through the
# variable datafile, never by its text, so no path is ever spliced into gnuplot syntax.
cmd = 'plot '
if (nband > 0) {
  cmd = cmd . 'datafile index 0 using 1:4:5 with filledcurves fillcolor rgb "#cfe2f3" fillstyle solid 1.0 noborder title "baseline band: median of the previous 5 runs +/- 5%", '
  cmd = cmd . 'datafile index 0 using 1:6 with lines dashtype 3 linecolor rgb "#5b8db8" title "baseline", '
}
cmd = cmd . 'datafile index 0 using 1:3:xtic(label_at($1, strcol(2))) with linespoints pointtype 7 pointsize 1 linewidth 2 linecolor rgb "#222222" title "value"'
if (nflag > 0) {
  cmd = cmd . ', datafile index 0 using 1:7 with points pointtype 9 pointsize 2.5 linecolor rgb "#d62728" title "regression (memleak-run compare)"'
}
if (ncp > 0) {
  cmd = cmd . ', datafile index 1 using 1:(ymin):(0):(ymax - ymin) with vectors nohead dashtype 2 linewidth 2 linecolor rgb "#9467bd" title "change point"'
  cmd = cmd . ', datafile index 1 using 1:(ymax):2 with labels left offset 0.5,-1 textcolor rgb "#9467bd" notitle'
}

do for [fmt in "png svg"] {
  if (fmt eq "png") {
    set terminal pngcairo size 1000,560 noenhanced font "sans,10"
  } else {
    set terminal svg size 1000,560 dynamic noenhanced background "white" font "sans,10"
  }
  set output ARG2 . "." . fmt
  eval cmd
  unset output
}
