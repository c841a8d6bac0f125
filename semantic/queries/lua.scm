; Definitions for Lua. See python.scm for the capture conventions.
; `function M.create()` is named `create` inside `M`; `function M:m()` is a method of `M`.

(function_declaration
  name: (identifier) @name) @definition.function

(function_declaration
  name: (dot_index_expression
    table: (identifier) @receiver
    field: (identifier) @name)) @definition.function

(function_declaration
  name: (method_index_expression
    table: (identifier) @receiver
    method: (identifier) @name)) @definition.method
