-- wrk script: GET a path built from PATH_FMT (a format with one %s) and a
-- random id from IDS_FILE; or, with BODY_FMT set, POST that body (GraphQL).
local ids = {}
for line in io.lines(os.getenv("IDS_FILE")) do ids[#ids + 1] = line end
local path_fmt = os.getenv("PATH_FMT")
local body_fmt = os.getenv("BODY_FMT")
local key = os.getenv("API_KEY") or ""

function setup(thread) thread:set("id", math.random(1, 1e9)) end
function init() math.randomseed(id or os.time()) end

request = function()
  local v = ids[math.random(#ids)]
  local headers = {}
  if key ~= "" then headers["Authorization"] = key end
  if body_fmt and body_fmt ~= "" then
    headers["Content-Type"] = "application/json"
    return wrk.format("POST", path_fmt, headers, string.format(body_fmt, v))
  end
  return wrk.format("GET", string.format(path_fmt, v), headers)
end

-- Count non-2xx answers so a run full of errors cannot pass for fast.
local bad = 0
response = function(status) if status >= 300 then bad = bad + 1 end end
done = function(summary, latency, requests)
  io.write(string.format("non2xx_or_errors=%d\n", summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
