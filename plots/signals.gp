# signals.gp: one cell's judged signals per iteration, one panel each (issue 9): live heap, anonymous and mapped
# memory (VmSize) beyond what the allocator holds, descriptors, threads and mappings; a leaking panel drawn red.
# It must never read the db or run a shell: memleak-run report exports the TSV and calls
#   gnuplot -c signals.gp DATA.tsv OUT_STEM TITLE "heap=pass anon=leak ..." FIRST_MEASURED "LO1 HI1 ... LO6 HI6"
# ("nan nan": a signal not measured, drawn as an empty panel) and this writes OUT_STEM.png and OUT_STEM.svg. TSV columns: iteration, measured, heap_mib, anon_mib, mapped_mib,
# fds, threads, mappings ("?" when not measured).
datafile = ARG1
verdicts = ARG4
measured_from = ARG5 + 0.0
ranges = ARG6

array names[6] = ["heap", "anon", "mapped", "fds", "threads", "mappings"]
array labels[6] = ["live heap (MiB)", "anonymous beyond the allocator (MiB)", "VmSize beyond the allocator (MiB)", \
                   "open descriptors", "threads", "mappings (heap shim)"]
# the verdict of series i: the word after "NAME=" in verdicts, "-" when it was not judged
verdict(i) = (strstrt(" " . verdicts . " ", " " . names[i] . "=") > 0) ? \
  word(substr(" " . verdicts . " ", strstrt(" " . verdicts . " ", " " . names[i] . "=") + strlen(names[i]) + 2, \
              strlen(verdicts) + 2), 1) : "-"

set datafile separator "\t"
set datafile missing "?"
set grid
set autoscale xfix
unset key

do for [fmt in "png svg"] {
  if (fmt eq "png") {
    set terminal pngcairo size 1200,640 noenhanced font "sans,9"
  } else {
    set terminal svg size 1200,640 dynamic noenhanced background "white" font "sans,9"
  }
  set output ARG2 . "." . fmt
  set multiplot layout 2,3 title ARG3 font ",12"
  do for [i=1:6] {
    v = verdict(i)
    set title labels[i] . ": " . v textcolor rgb (v eq "leak" ? "#cc0000" : v eq "plateau" ? "#9a6700" : "#000000")
    if (measured_from > 0) {
      set object 1 rectangle from graph 0, graph 0 to first measured_from, graph 1 \
          fillcolor rgb "#e8e8e8" fillstyle solid 1.0 noborder behind
    }
    lo = real(word(ranges, 2 * i - 1))
    hi = real(word(ranges, 2 * i))
    if (lo != lo) {
      set yrange [0:1]
      set label 1 "not measured" at graph 0.5, graph 0.5 center
      plot datafile using 1:(NaN) with lines
      unset label 1
    } else {
      set yrange [lo:hi]
      plot datafile using 1:(column(i + 2)) with lines linewidth (v eq "leak" ? 2.5 : 1.2) \
           linecolor rgb (v eq "leak" ? "#cc0000" : "#1f77b4")
    }
    unset object 1
  }
  unset multiplot
  unset output
}
