-- wrk script of the rows "a page no cache holds": every request is a query of its own, the
-- row's path plus t=<thread>&n=<counter> (parameters orderd ignores and its Link drops), so
-- that no cache holds its answer. With PETS=FILE (one pet id a line), each request also asks
-- for a different pet of the file, petId=<pet>, each of wrk's two threads from its own half.
local threads = 0
function setup(thread) threads = threads + 1; thread:set("tid", threads) end
function init(args)
  n = 0
  pets = {}
  local file = os.getenv("PETS")
  if file and file ~= "" then
    for line in io.lines(file) do pets[#pets + 1] = line end
    if #pets == 0 then error("no pets in " .. file) end
  end
end
function request()
  n = n + 1
  local path = wrk.path
  if #pets > 0 then
    path = path .. "&petId=" .. pets[((tid - 1) * math.floor(#pets / 2) + n - 1) % #pets + 1]
  end
  return wrk.format(nil, path .. "&t=" .. tid .. "&n=" .. n)
end
