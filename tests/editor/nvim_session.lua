-- A short scripted Neovim session driving `nav lsp` (run by tests/test_editor_nvim.py):
-- open a file, edit it without saving, then definition, references, documentSymbol and
-- callHierarchy at the shifted positions. Works on Neovim 0.7 (Debian bookworm) and later.
-- Env: NAV_NVIM_ROOT (workspace), NAV_NVIM_CMD (JSON list: the server command), NAV_NVIM_OUT.
local root = os.getenv("NAV_NVIM_ROOT")
local out_path = os.getenv("NAV_NVIM_OUT")
local cmd = vim.fn.json_decode(os.getenv("NAV_NVIM_CMD"))
local results = { steps = {} }

local function finish()
  local fh = io.open(out_path, "w")
  fh:write(vim.fn.json_encode(results))
  fh:close()
  vim.cmd("qall!")
end

local ok, err = pcall(function()
  local client_id = vim.lsp.start_client({
    name = "nav",
    cmd = cmd,
    root_dir = root,
    flags = { debounce_text_changes = 0 },
  })
  vim.cmd("edit " .. root .. "/orders/app.py")
  local bufnr = vim.api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(bufnr, client_id)
  local ready = vim.wait(60000, function()
    local c = vim.lsp.get_client_by_id(client_id)
    return c ~= nil and c.initialized
  end, 50)
  table.insert(results.steps, "initialized=" .. tostring(ready))

  -- edit without saving: four lines above everything
  vim.api.nvim_buf_set_lines(bufnr, 0, 0, false, { "def helper() -> int:", "    return 41", "", "" })
  results.modified = vim.api.nvim_buf_get_option(bufnr, "modified")
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  local call_line, call_col
  for i, text in ipairs(lines) do
    local s = text:find("order = create_sales_order%(")
    if s then
      call_line, call_col = i - 1, s - 1 + #"order = " + 2
      break
    end
  end
  results.call_line = call_line
  local uri = vim.uri_from_bufnr(bufnr)
  local pos = { textDocument = { uri = uri }, position = { line = call_line, character = call_col } }

  local function ask(method, params)
    local resp, e = vim.lsp.buf_request_sync(bufnr, method, params, 90000)
    if not resp then
      return { error = tostring(e) }
    end
    local r = resp[client_id] or {}
    return { result = r.result, error = r.err and r.err.message or nil }
  end

  results.definition = ask("textDocument/definition", pos)
  results.references = ask("textDocument/references", {
    textDocument = pos.textDocument, position = pos.position, context = { includeDeclaration = false },
  })
  results.documentSymbol = ask("textDocument/documentSymbol", { textDocument = { uri = uri } })
  local prepared = ask("textDocument/prepareCallHierarchy", pos)
  results.prepareCallHierarchy = prepared
  if prepared.result and prepared.result[1] then
    results.incomingCalls = ask("callHierarchy/incomingCalls", { item = prepared.result[1] })
  end
  results.disk_unchanged = (vim.fn.readfile(root .. "/orders/app.py")[1] ~= "def helper() -> int:")
  vim.lsp.stop_client(client_id)
  vim.wait(10000, function() return vim.lsp.get_client_by_id(client_id) == nil end, 50)
end)
if not ok then
  results.lua_error = tostring(err)
end
finish()
