//! Called `.func`s: each gets its parameter and return slots on first reference and is queued
//! for compilation; the call graph is measured for depth, and recursion refused.

use std::collections::HashMap;
use std::ops::Range;

use super::decoder::{DResult, Decoder, FuncSig, Scope, Sym};
use jitseam_ptx::Param;
use jitseam_ptx::{ParseErrorKind, excerpt};

impl<'a> Decoder<'a> {
    pub(super) fn func_scope(&mut self, index: usize) -> DResult<(Range<usize>, Scope<'a>)> {
        let module = self.module;
        let Some(func) = module.functions.get(index) else {
            return Err(self.unsupported_at(0, "call", "unknown function"));
        };
        let Some(body) = func.body.clone() else {
            return Err(self.unsupported_at(func.offset, &func.name, "function has no body"));
        };
        let mut scope = Scope::default();
        if let Some(sig) = self.sigs.get(&index) {
            for (param, &sym) in func.params.iter().zip(&sig.params) {
                scope.names.insert(param.name.clone(), sym);
            }
            for (param, &sym) in func.returns.iter().zip(&sig.returns) {
                scope.names.insert(param.name.clone(), sym);
            }
        }
        Ok((body, scope))
    }

    /// The slots of function `name`, allocated (and its body queued) on first reference.
    pub(super) fn signature(&mut self, name: &str, offset: usize) -> DResult<usize> {
        let module = self.module;
        let Some(index) = module
            .functions
            .iter()
            .position(|f| f.name == name && f.body.is_some())
        else {
            return Err(self.parse_error(
                offset,
                ParseErrorKind::Undeclared {
                    name: excerpt(name),
                },
            ));
        };
        if self.sigs.contains_key(&index) {
            return Ok(index);
        }
        let func = &module.functions[index];
        let slots = |list: &[Param], this: &mut Self| -> DResult<Vec<Sym>> {
            list.iter()
                .map(|p| {
                    let size = u32::try_from(p.size_bytes()).unwrap_or(u32::MAX);
                    if p.reg {
                        if p.array_len.is_some() || size > 8 {
                            return Err(this.unsupported_at(
                                p.offset,
                                &p.name,
                                "register parameters that are arrays",
                            ));
                        }
                        let slot = this.alloc(1)?;
                        this.set_reg_bits(slot, 1, p.ty);
                        return Ok(Sym::Reg(slot));
                    }
                    if let Some(len) = p.array_len {
                        return this.param_array(p.ty, len, p.align, p.offset, &p.name);
                    }
                    if size > 8 {
                        return Err(this.unsupported_at(
                            p.offset,
                            &p.name,
                            "parameters larger than 8 bytes",
                        ));
                    }
                    Ok(Sym::ParamSlot {
                        slot: this.alloc(1)?,
                        size,
                    })
                })
                .collect()
        };
        let params = slots(&func.params, self)?;
        let returns = slots(&func.returns, self)?;
        self.sigs.insert(
            index,
            FuncSig {
                params,
                returns,
                callees: Vec::new(),
            },
        );
        self.pending.push(index);
        Ok(index)
    }

    /// Length of the longest call chain; refuses recursion.
    pub(super) fn call_depth(&self) -> DResult<usize> {
        // Iterative DFS with colours over the call graph rooted at the entry.
        let mut depth: HashMap<usize, usize> = HashMap::new();
        let mut on_stack: HashMap<usize, bool> = HashMap::new();
        let mut best = 0usize;
        for &root in &self.entry_callees {
            let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
            on_stack.insert(root, true);
            while let Some(&mut (node, ref mut next)) = stack.last_mut() {
                let callees = self.sigs.get(&node).map_or(&[][..], |s| &s.callees[..]);
                if let Some(&callee) = callees.get(*next) {
                    *next += 1;
                    if on_stack.get(&callee).copied().unwrap_or(false) {
                        let name = self
                            .module
                            .functions
                            .get(callee)
                            .map_or("call", |f| f.name.as_str());
                        let offset = self.module.functions.get(callee).map_or(0, |f| f.offset);
                        return Err(self.unsupported_at(offset, name, "recursive calls"));
                    }
                    if !depth.contains_key(&callee) {
                        on_stack.insert(callee, true);
                        stack.push((callee, 0));
                    }
                } else {
                    let own = 1 + callees
                        .iter()
                        .map(|c| depth.get(c).copied().unwrap_or(0))
                        .max()
                        .unwrap_or(0);
                    depth.insert(node, own);
                    on_stack.insert(node, false);
                    stack.pop();
                }
            }
            best = best.max(depth.get(&root).copied().unwrap_or(0));
        }
        Ok(best)
    }

    pub(super) fn current_function(&self) -> Option<usize> {
        self.compiling
    }
}
