-- Drives a headless Neovim 0.7 the way a user would: the README's set-up attaches the OOM Guard server to a Python
-- buffer; then read the diagnostics, ask for code actions on one flagged line (as vim.lsp.buf.code_action() does),
-- apply the one titled OOMGUARD_E2E_FIX and write the file. Everything seen goes to OOMGUARD_E2E_RESULT as JSON.
local env = vim.env
local result = { steps = {} }
local started = vim.loop.hrtime()

local function elapsed_ms()
  return math.floor((vim.loop.hrtime() - started) / 1e6)
end

local function mark(name)
  table.insert(result.steps, { name = name, ms = elapsed_ms() })
end

local function diagnostics(bufnr)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(out, { code = d.code, lnum = d.lnum, col = d.col, message = d.message, source = d.source })
  end
  table.sort(out, function(a, b) return a.lnum < b.lnum or (a.lnum == b.lnum and a.col < b.col) end)
  return out
end

local function run()
  vim.cmd('filetype on')
  dofile(env.OOMGUARD_E2E_INIT)
  vim.cmd('edit ' .. vim.fn.fnameescape(env.OOMGUARD_E2E_FILE))
  local bufnr = vim.api.nvim_get_current_buf()
  result.filetype = vim.bo[bufnr].filetype
  local attached = vim.wait(10000, function() return next(vim.lsp.buf_get_clients(bufnr)) ~= nil end, 20)
  if not attached then error('no language client attached to the buffer (filetype ' .. result.filetype .. ')') end
  mark('attached')

  if not vim.wait(15000, function() return #vim.diagnostic.get(bufnr) > 0 end, 20) then
    error('no diagnostics within 15 s')
  end
  result.before = diagnostics(bufnr)
  mark('diagnostics')

  -- 1-based line and column of the finding to fix, as the CLI prints them.
  local line, col = tonumber(env.OOMGUARD_E2E_LINE), tonumber(env.OOMGUARD_E2E_COL)
  vim.api.nvim_win_set_cursor(0, { line, col - 1 })
  local params = vim.lsp.util.make_range_params()
  params.context = { diagnostics = vim.lsp.diagnostic.get_line_diagnostics(bufnr) }
  local responses, err = vim.lsp.buf_request_sync(bufnr, 'textDocument/codeAction', params, 10000)
  if not responses then error('codeAction request failed: ' .. tostring(err)) end
  result.titles = {}
  local chosen, encoding
  for client_id, response in pairs(responses) do
    if response.err then error('codeAction error: ' .. vim.inspect(response.err)) end
    for _, action in ipairs(response.result or {}) do
      table.insert(result.titles, action.title)
      if action.title == env.OOMGUARD_E2E_FIX and not chosen then
        chosen = action
        encoding = vim.lsp.get_client_by_id(client_id).offset_encoding
      end
    end
  end
  mark('code actions')
  if not chosen then error('no code action titled ' .. env.OOMGUARD_E2E_FIX) end
  if not chosen.edit then error('the chosen code action carries no edit') end

  local before_changedtick = vim.b[bufnr].changedtick
  vim.lsp.util.apply_workspace_edit(chosen.edit, encoding)
  if vim.b[bufnr].changedtick == before_changedtick then error('applying the edit changed nothing') end
  vim.cmd('write')
  mark('applied')

  -- The server re-checks the changed buffer; wait until the fixed line has no finding left.
  vim.wait(10000, function()
    for _, d in ipairs(vim.diagnostic.get(bufnr)) do
      if d.lnum == line - 1 and d.code == env.OOMGUARD_E2E_CODE then return false end
    end
    return true
  end, 20)
  result.after = diagnostics(bufnr)
  mark('re-checked')
end

local ok, message = pcall(run)
result.ok = ok
if not ok then result.error = tostring(message) end
local file = assert(io.open(env.OOMGUARD_E2E_RESULT, 'w'))
file:write(vim.fn.json_encode(result))
file:close()
for _, client in pairs(vim.lsp.get_active_clients()) do client.stop() end
vim.wait(2000, function() return #vim.lsp.get_active_clients() == 0 end, 20)
vim.cmd(ok and 'qall!' or 'cquit 1')
