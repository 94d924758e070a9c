-- releases_table.sql: the rows of engines/openvino/RELEASES.md from a run of scenarios/openvino-recompile-releases.yaml
-- (sqlite3 rel.db < releases_table.sql): one Markdown row per cell of the newest run. It must never write to the db.
SELECT '| ' || json_extract(c.axes, '$.version') || ' | ' || printf('%.1f MiB', cs.peak_kib / 1024.0) || ' | ' ||
       printf('%.1f MiB', cs.heap_peak_bytes / 1048576.0) || ' | ' || printf('%.1f MiB', cs.final_rss_kib / 1024.0) ||
       ' | ' || printf('%.1f MiB', it.final_rss_kib / 1024.0) || ' | ' || printf('%+.1f B', h.slope_per_iter) || ' | ' ||
       printf('%.0f ms', cs.wall_ms_median) || ' | ' || c.detail || ' |'
FROM cells c
JOIN step_stats cs ON cs.cell_id = c.id AND cs.step = 'compile_model'
JOIN step_stats it ON it.cell_id = c.id AND it.step = 'iteration'
LEFT JOIN series_results h ON h.cell_id = c.id AND h.series = 'heap'
WHERE c.run_id = (SELECT MAX(id) FROM runs)
ORDER BY c.idx;
