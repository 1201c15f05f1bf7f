//! The page without a browser: the shell's loop natively — each update's requests answered by
//! a `Simulation` in this thread and each reply fed back as an action, as the browser's shell
//! does with its worker. The page's native tests drive it.

use super::action::{Action, Effect};
use super::state::{PageConfig, PageState};
use super::update::update;
use crate::page::sim::Simulation;
use std::collections::VecDeque;

/// A page and the simulation answering it.
pub struct Driver {
    pub state: PageState,
    pub sim: Simulation,
}

impl Driver {
    /// The page as it opens, its journal replayed.
    pub fn open(config: PageConfig) -> Driver {
        let mut driver = Driver { state: PageState::new(config), sim: Simulation::new(0) };
        driver.update(Action::Open);
        driver
    }

    /// Applies an action and every reply it leads to; returns the effects for the browser,
    /// in order (a redraw once).
    pub fn update(&mut self, action: Action) -> Vec<Effect> {
        let mut queue = VecDeque::from([action]);
        let mut effects = Vec::new();
        while let Some(action) = queue.pop_front() {
            for effect in update(&mut self.state, action) {
                match effect {
                    Effect::Ask(id, request) => {
                        queue.push_back(Action::Reply(id, Box::new(self.sim.answer(request))));
                    }
                    Effect::Redraw | Effect::RedrawIfDue if effects.contains(&effect) => {}
                    other => effects.push(other),
                }
            }
        }
        effects
    }
}

impl std::ops::Deref for Driver {
    type Target = PageState;
    fn deref(&self) -> &PageState {
        &self.state
    }
}

impl std::ops::DerefMut for Driver {
    fn deref_mut(&mut self) -> &mut PageState {
        &mut self.state
    }
}
