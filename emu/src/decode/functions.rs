//! Called `.func`s: each gets its parameter and return slots before any body is compiled, so
//! that callers and the function itself agree on where every value travels. The call graph's
//! depth and the refusal of recursion are the resolver's ([`ResolvedEntry::call_depth`]).
//!
//! [`ResolvedEntry::call_depth`]: jitseam_ptx::resolve::ResolvedEntry::call_depth

use super::decoder::{DResult, Decoder, FuncSig, Sym};
use jitseam_ptx::Param;

impl Decoder<'_> {
    /// Allocates the slots of function `index`'s parameters and return values.
    pub(super) fn signature(&mut self, index: u32) -> DResult<()> {
        if self.sigs.contains_key(&index) {
            return Ok(());
        }
        let module = self.module;
        let Some(func) = module.module.functions.get(index as usize) else {
            return Err(self.unsupported_line(1, "call", "unknown function"));
        };
        let slots = |list: &[Param], this: &mut Self, returns: bool| -> DResult<Vec<Sym>> {
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
                        if returns {
                            // The caller reads it after the call, whatever the callee wrote.
                            this.unwritten.push(slot);
                        }
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
                    let slot = this.alloc(1)?;
                    this.unwritten.push(slot);
                    Ok(Sym::ParamSlot { slot, size })
                })
                .collect()
        };
        let params = slots(&func.params, self, false)?;
        let returns = slots(&func.returns, self, true)?;
        self.sigs.insert(index, FuncSig { params, returns });
        Ok(())
    }
}
