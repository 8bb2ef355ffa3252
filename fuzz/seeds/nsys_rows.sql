-- Rows for the nsys fuzz seed (scripts/fuzz.sh loads tests/data/trace/nsys_schema.sql first):
-- the shape of src/trace/nsys_reader_test.cc's database, small enough to mutate.
INSERT INTO StringIds VALUES (1,'cudaLaunchKernel'),(2,'gemm_kernel'),(3,'gemm'),(4,'norm_kernel'),
  (5,'norm'),(6,'decode_step'),(7,'cudaMemcpyAsync');
INSERT INTO TARGET_INFO_GPU (vmId, id, name) VALUES (0, 0, 'NVIDIA H200');
INSERT INTO NVTX_EVENTS (start, end, eventType, textId, globalTid)
  VALUES (1000, 2000, 59, 6, 281543696187905);
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid)
  VALUES (3000, 4000, 59, 'decode_step', 281543696187905);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1100, 1150, 0, 281543696187905, 1, 1, 0, 0),
  (3100, 3150, 0, 281543696187905, 3, 1, 0, 0), (3300, 3310, 0, 281543696187905, 6, 7, 0, 0);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
  (1150,1400,0,1,NULL,7,1,281543696187904,2,3,NULL,0,0,32,1,1,1,128,1,1,0,0,0,0,1,0,0,0),
  (3150,3300,0,1,NULL,7,3,281543696187904,4,5,NULL,0,0,32,1,1,1,128,1,1,0,0,0,0,1,0,0,0);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId,
  correlationId, globalPid, bytes, copyKind) VALUES (3320, 3340, 0, 1, 7, 6, 281543696187904, 4096, 1);
