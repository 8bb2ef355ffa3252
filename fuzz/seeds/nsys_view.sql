-- An "nsys export" whose kernel table is a recursive VIEW (issue 21: it was read for ever).
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'gemm_kernel'), (2, 'cudaLaunchKernel');
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (100, 150, 1, 1, 2);
CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS WITH RECURSIVE r(n) AS (SELECT 0 UNION ALL
  SELECT n + 1 FROM r) SELECT n AS start, n + 1 AS end, 0 AS deviceId, 7 AS streamId,
  n AS correlationId, 0 AS globalPid, 1 AS demangledName FROM r;
