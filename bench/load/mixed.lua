-- bench/load/mixed.lua - the request mix for wrk (bench/load/run.sh):
--   40% GET /runs/ID (an id of the pre-filled runs, read from the file
--       given as the script's first argument), 20% GET /runs?limit=50,
--   30% GET /healthz, 10% POST /runs (a small smem_stride sweep).
-- An optional second argument sets the share of posts in percent (0: reads
-- only; the reads keep their 4:2:3 proportions), to tell read and write
-- costs apart.
-- Every answer is counted by status per thread; done() prints the totals,
-- socket errors and latency percentiles in one block that run.sh parses.
local ids = {}
local post_pct = 10
counts = {}  -- global: done() reads it from each thread with thread:get
local threads = {}
local post_body = '{"benchmark":"smem_stride","params":{"strides":[1,2,32,33],"samples":3},"label":"load"}'

function setup(thread)
  table.insert(threads, thread)
  thread:set("tid", #threads)  -- so each thread draws its own sequence
end

function init(args)
  for line in io.lines(args[1]) do
    if #line > 0 then ids[#ids + 1] = line end
  end
  if args[2] then post_pct = tonumber(args[2]) end
  math.randomseed(os.time() + (tid or 0) * 7919)
end

function request()
  if math.random() * 100 < post_pct then
    return wrk.format("POST", "/runs", {["Content-Type"] = "application/json"}, post_body)
  end
  local r = math.random(90)
  if r <= 40 then
    return wrk.format("GET", "/runs/" .. ids[math.random(#ids)])
  elseif r <= 60 then
    return wrk.format("GET", "/runs?limit=50")
  end
  return wrk.format("GET", "/healthz")
end

function response(status, headers, body)
  counts[status] = (counts[status] or 0) + 1
end

function done(summary, latency, requests)
  local total = {}
  for _, t in ipairs(threads) do
    local c = t:get("counts")
    for status, n in pairs(c) do total[status] = (total[status] or 0) + n end
  end
  local secs = summary.duration / 1e6
  io.write("RESULT requests ", summary.requests, "\n")
  io.write(string.format("RESULT seconds %.1f\n", secs))
  io.write(string.format("RESULT rps %.0f\n", summary.requests / secs))
  for status, n in pairs(total) do io.write("RESULT status_", status, " ", n, "\n") end
  local e = summary.errors
  io.write("RESULT socket_errors connect ", e.connect, " read ", e.read, " write ", e.write,
           " timeout ", e.timeout, " status ", e.status, "\n")
  for _, p in ipairs({50, 90, 99, 99.9}) do
    io.write(string.format("RESULT latency_p%s_ms %.2f\n", p, latency:percentile(p) / 1000))
  end
  io.write(string.format("RESULT latency_max_ms %.2f\n", latency.max / 1000))
end
