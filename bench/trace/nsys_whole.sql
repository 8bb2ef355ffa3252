-- The whole-trace anchor of the nsys benches (bench/trace/bench_nsys.sh, bench_nsys_window.sh,
-- bench/ci_perf.sh): sqlite3 computing what `vouch trace summarize` reports of an export with
-- no window: the kernels' count, sum and extent, each kernel name's count, sum, min and max,
-- and the launch calls' count and sum.
SELECT COUNT(*), SUM(end - start), MIN(start), MAX(end) FROM CUPTI_ACTIVITY_KIND_KERNEL;
SELECT s.value, k.n, k.total, k.lo, k.hi FROM
  (SELECT demangledName AS id, COUNT(*) AS n, SUM(end - start) AS total, MIN(end - start) AS lo,
          MAX(end - start) AS hi FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY demangledName) k
  JOIN StringIds s ON s.id = k.id ORDER BY k.total DESC;
SELECT COUNT(*), SUM(r.end - r.start) FROM CUPTI_ACTIVITY_KIND_RUNTIME r
  JOIN StringIds s ON s.id = r.nameId WHERE s.value LIKE '%LaunchKernel%';
