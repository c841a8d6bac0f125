; Definitions for Lua. See python.scm for the capture conventions.
; `function M.create()` is named `create` inside `M`; `function M:m()` is a method of `M`.
; Modules are tables: `M.setup = function() ... end` and `local f = function() ... end`
; define functions just as `function M.setup()` does.

(function_declaration
  name: (identifier) @name) @definition.function

(function_declaration
  name: (dot_index_expression
    table: (_) @receiver
    field: (identifier) @name)) @definition.function

(function_declaration
  name: (method_index_expression
    table: (_) @receiver
    method: (identifier) @name)) @definition.method

(assignment_statement
  (variable_list
    .
    name: (identifier) @name)
  (expression_list
    .
    value: (function_definition))) @definition.function

(assignment_statement
  (variable_list
    .
    name: (dot_index_expression
      table: (_) @receiver
      field: (identifier) @name))
  (expression_list
    .
    value: (function_definition))) @definition.function
