//! The client library every component is built on, as client-go is: the component contract
//! and what it may do while it runs (send requests, record decisions and Events), informers
//! and their caches, shared informers, work queues, and the event recorder.

pub mod component;
pub mod event_recorder;
pub mod leaderelection;
pub mod object_cache;
pub mod shared_informer;
pub mod workqueue;
