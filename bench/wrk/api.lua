-- The saturated phases of the HTTP benchmarks, driven by wrk (bench/_common.py wrk_load).
-- WRK_MODE says what each request is:
--   decide  POST an approve for the next workflow id of this thread's share of WRK_IDS
--   start   POST an expense start, a new subject per request (WRK_RUN, WRK_DATA)
--   get     GET WRK_PATH
-- Every request carries WRK_TOKEN. done() writes the statuses and latency percentiles
-- to WRK_OUT as JSON.
local mode = os.getenv("WRK_MODE")
local out = os.getenv("WRK_OUT")
local nthreads = tonumber(os.getenv("WRK_THREADS") or "1")
local threads = {}
local created = 0

function setup(thread)
  thread:set("tid", created)
  created = created + 1
  table.insert(threads, thread)
end

function init(args)
  statuses = {}
  exhausted = 0
  counter = 0
  ids = {}
  if mode == "decide" then
    for line in io.lines(os.getenv("WRK_IDS")) do ids[#ids + 1] = line end
  end
  headers = {
    ["Content-Type"] = "application/json",
    ["Authorization"] = "Bearer " .. os.getenv("WRK_TOKEN"),
  }
end

function request()
  counter = counter + 1
  if mode == "decide" then
    local i = tid + (counter - 1) * nthreads + 1
    if i > #ids then
      exhausted = exhausted + 1
      return wrk.format("GET", "/healthz", headers)
    end
    local body = string.format('{"decision":"approve","requestId":"wrk-%s"}', ids[i])
    return wrk.format("POST", "/api/workflows/" .. ids[i] .. "/decisions", headers, body)
  elseif mode == "start" then
    local body = string.format(
      '{"template":"expense-approval","subject":{"type":"%s","id":"%s-%d-%d"},"data":%s}',
      os.getenv("WRK_SUBJECT_TYPE"), os.getenv("WRK_RUN"), tid, counter, os.getenv("WRK_DATA"))
    return wrk.format("POST", "/api/workflows", headers, body)
  end
  return wrk.format("GET", os.getenv("WRK_PATH"), headers)
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, requests)
  local counts, skipped = {}, 0
  for _, thread in ipairs(threads) do
    for status, n in pairs(thread:get("statuses")) do
      counts[status] = (counts[status] or 0) + n
    end
    skipped = skipped + thread:get("exhausted")
  end
  local parts = {}
  for status, n in pairs(counts) do parts[#parts + 1] = string.format('"%d": %d', status, n) end
  local e = summary.errors
  local f = assert(io.open(out, "w"))
  f:write(string.format(
    '{"requests": %d, "seconds": %.6f, "statuses": {%s}, "exhausted": %d,'
      .. ' "socket_errors": %d, "p50": %.3f, "p95": %.3f, "p99": %.3f, "max": %.3f}\n',
    summary.requests, summary.duration / 1e6, table.concat(parts, ", "), skipped,
    e.connect + e.read + e.write + e.timeout,
    latency:percentile(50) / 1000, latency:percentile(95) / 1000,
    latency:percentile(99) / 1000, latency.max / 1000))
  f:close()
end
