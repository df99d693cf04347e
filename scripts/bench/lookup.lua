-- wrk script: GET a path built from PATH_FMT (a format with one %s) and a
-- random id from IDS_FILE; or, with BODY_FMT set, POST that body (GraphQL).
-- The ids file is read whole into one string: a million ids as a million
-- table entries cost each of wrk's Lua states (the main one and one per
-- thread) about 0.7 s of CPU to build, which make bench would count as
-- the client's CPU per request. When every line has one width (tax ids,
-- roots) an id is cut out of the string at a random line's offset; other
-- files (search URLs, a few thousand lines) become a table.
local f = assert(io.open(os.getenv("IDS_FILE"), "rb"))
local all = f:read("*a")
f:close()
local width = (all:find("\n", 1, true) or 0) -- a line with its newline
local count = 0
if width > 1 and #all % width == 0 then
  count = #all / width
  for i = 1, count do
    if all:byte(i * width) ~= 10 then count = 0; break end
  end
end
local ids = {}
if count == 0 then
  for line in all:gmatch("[^\n]+") do ids[#ids + 1] = line end
  all = nil
end
local function random_id()
  if count > 0 then
    local i = math.random(0, count - 1) * width
    return all:sub(i + 1, i + width - 1)
  end
  return ids[math.random(#ids)]
end
local path_fmt = os.getenv("PATH_FMT")
local body_fmt = os.getenv("BODY_FMT")
local key = os.getenv("API_KEY") or ""
-- ACCEPT_ENCODING, when set, is sent as real clients send it ("gzip, deflate,
-- br" from Node's fetch): answers of 4 KiB or more then come compressed.
local accept_encoding = os.getenv("ACCEPT_ENCODING") or ""

-- Each run draws ids of its own: the main state's generator, which seeds
-- the threads', starts from /dev/urandom. LuaJIT's fixed default seed gave
-- every run of a thread count the same sequence, so a later run (the next
-- round, the next configuration) asked for the pages the earlier ones had
-- brought into PostgreSQL's buffers.
do
  local u = assert(io.open("/dev/urandom", "rb"))
  local b = u:read(4)
  u:close()
  math.randomseed(((b:byte(1) * 256 + b:byte(2)) * 256 + b:byte(3)) * 256 + b:byte(4))
end
function setup(thread) thread:set("id", math.random(1, 1e9)) end

-- The request around the id, formatted once by wrk.format (the Host
-- header, the key, a POST's Content-Type and length) when every id has one
-- width: each request is then three strings joined. wrk.format per request
-- (a headers table, the request line and headers rebuilt) took wrk 5-7 µs
-- more per lookup, 21-23 against 16, where pgbench's own client takes 9.
local before, after
local function format(v)
  local headers = {}
  if key ~= "" then headers["Authorization"] = key end
  if accept_encoding ~= "" then headers["Accept-Encoding"] = accept_encoding end
  if body_fmt and body_fmt ~= "" then
    headers["Content-Type"] = "application/json"
    return wrk.format("POST", path_fmt, headers, string.format(body_fmt, v))
  end
  return wrk.format("GET", string.format(path_fmt, v), headers)
end
function init()
  math.randomseed(id or os.time())
  if count > 0 then
    local mark = string.rep("\0", width - 1)
    local r = format(mark)
    local i, j = r:find(mark, 1, true)
    before, after = r:sub(1, i - 1), r:sub(j + 1)
  end
end

request = function()
  local v = random_id()
  if before then return before .. v .. after end
  return format(v)
end

-- A run full of errors cannot pass for fast: wrk counts every answer with
-- a status of 400 or more in summary.errors.status by itself. A Lua
-- response() would count them too, but wrk then hands every answer's
-- headers and body to Lua: about 2 µs of wrk's CPU per office lookup,
-- and hundreds per company of 1,000 offices, taken from the cores the
-- server and PostgreSQL share with it.
done = function(summary, latency, requests)
  io.write(string.format("non2xx_or_errors=%d\n", summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
